package ui

import (
	"context"
	"fmt"
	"slices"

	tea "charm.land/bubbletea/v2"

	"paydesk/internal/textsafe"
	"paydesk/store"
	"paydesk/views"
)

// receiptReader is a Store that knows how often each push was received
// (*store.DB is one); a store without it shows every push as received once.
type receiptReader interface {
	PushReceiptsOf(ctx context.Context, ps []*store.PushRecord) (map[uint64]store.PushReceipts, error)
}

// pushRows prepares the pushes for the log, each with its receipts when
// the store keeps them.
func pushRows(ctx context.Context, st Store, ps []*store.PushRecord) ([]*views.PushRow, error) {
	rr, ok := st.(receiptReader)
	if !ok {
		return views.NewPushRows(ps), nil
	}
	rc, err := rr.PushReceiptsOf(ctx, ps)
	if err != nil {
		return nil, err
	}
	return views.NewPushRowsReceipts(ps, rc), nil
}

// loadPushReceipts reads the receipts of a push whose page was opened.
func (a *App) loadPushReceipts(p *store.PushRecord) tea.Cmd {
	rr, ok := a.cfg.Store.(receiptReader)
	if !ok || p == nil || p.Rejected {
		return nil
	}
	return func() tea.Msg {
		rc, err := rr.PushReceiptsOf(a.opsCtx(), []*store.PushRecord{p})
		if err != nil {
			return views.StatusMsg{Level: views.LevelError, Text: fmt.Sprintf("push %d: receipts: %v", p.ID, err)}
		}
		return views.PushReceiptsMsg{ID: p.ID, Receipts: rc[p.ID]}
	}
}

// resend asks the embedded sandbox to send a key's pushes again, and
// leaves a trace: an audit entry (who asked, for which key, when, and what
// the sandbox said) and a status line saying what was asked. The repeats
// it causes show in the Pushes tab as receipts ("×2").
func (a *App) resend(r views.ResendIntent) tea.Cmd {
	sb := a.cfg.Sandbox
	if sb == nil {
		a.status = views.StatusMsg{Level: views.LevelWarn, Text: "resend needs the embedded sandbox"}
		return nil
	}
	svc := a.cfg.Ops
	key := textsafe.Clean(r.Key)
	a.status = views.StatusMsg{Text: "asking the sandbox to send the pushes of " + key + " again…"}
	return func() tea.Msg {
		sendErr := sb.Resend(r.Key)
		var auditErr error
		if svc != nil {
			auditErr = svc.AuditResend(a.opsCtx(), r.Key, sendErr)
		}
		switch {
		case sendErr != nil:
			return views.StatusMsg{Level: views.LevelError, Text: "resend of " + key + ": " + textsafe.Clean(sendErr.Error())}
		case auditErr != nil:
			return views.StatusMsg{Level: views.LevelError, Text: "asked the sandbox to send the pushes of " + key + " again, but " + textsafe.Clean(auditErr.Error())}
		}
		return views.StatusMsg{Level: views.LevelOK, Text: "asked the sandbox to send the pushes of " + key +
			" again (in the audit log); the Pushes tab counts each repeat (×2)"}
	}
}

// loadRepeated reads again the pushes about keys, which were received
// once more, with their receipts: the log updates their rows in place.
func (a *App) loadRepeated(keys []string) tea.Cmd {
	st, keys := a.cfg.Store, slices.Clone(keys)
	return func() tea.Msg {
		ps, err := st.PushesFor(a.opsCtx(), keys...)
		if err != nil {
			return views.PushRowsMsg{Err: err}
		}
		rows, err := pushRows(a.opsCtx(), st, ps)
		if err != nil {
			return views.PushRowsMsg{Err: err}
		}
		return views.PushRowsMsg{Rows: rows}
	}
}

// mergeReceipts adds b's repeated receipts to a: the keys of both, or
// none (read the whole log) when either did not name them all.
func mergeReceipts(a, b store.Change, idx *keyIndex) store.Change {
	switch {
	case b.Receipts == 0:
	case a.Receipts == 0:
		a.ReceiptKeys = slices.Clone(b.ReceiptKeys)
		if idx != nil {
			idx.receipts = nil // made again from these
		}
	case a.ReceiptKeys == nil || b.ReceiptKeys == nil:
		a.ReceiptKeys = nil
		if idx != nil {
			idx.receipts = nil
		}
	case idx != nil:
		a.ReceiptKeys = appendIndexed(a.ReceiptKeys, b.ReceiptKeys, &idx.receipts)
	default:
		a.ReceiptKeys = appendNew(a.ReceiptKeys, b.ReceiptKeys)
	}
	a.Receipts += b.Receipts
	return a
}
