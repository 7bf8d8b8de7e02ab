package domain

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"

	"paydesk/api"
	"paydesk/internal/query"
)

// The push log is a list like the others: one window at a time, newest
// first, past a keyset cursor, with the filter language applied in the
// store. Its rows are the stored pushes and the rejected log's entries
// together; this file defines its order, its filter and its reference
// pager (PagePushes), which both engines are tested against.

// PushQuery asks for one window of the push log. Its PageQuery's Sort is
// unused (the log has one order: when a push was received); Desc asks for
// the newest first; Where is a PushLogFilter query; State is unused.
type PushQuery struct {
	PageQuery
	// Envelope keeps the pushes of one envelope (api.EnvelopeDataRequest,
	// api.EnvelopeTransaction); "" all.
	Envelope string
	// Kind keeps the pushes of one action code or transaction type.
	Kind string
	// Status keeps the pushes of one of PushStatuses; "" all.
	Status string
}

// PushStatuses are the values of PushQuery.Status: the gateway's status
// class of a stored push, rejected for what the listener refused, ignored
// for a stored push that changed nothing and is no confirmation.
var PushStatuses = []string{"success", "pending", "failed", "rejected", "ignored"}

// Check refuses a query the push log cannot answer.
func (q *PushQuery) Check() error {
	if q.Status != "" && !slices.Contains(PushStatuses, q.Status) {
		return fmt.Errorf("push log: status %q: not one of %s", q.Status, strings.Join(PushStatuses, ", "))
	}
	if err := q.Where.Check(PushLogFilter); err != nil {
		return fmt.Errorf("push log: %w", err)
	}
	return q.PageQuery.Check(SortCount)
}

// PushLogFilter is what the push log's filter takes: state: (the push's
// outcome word), amount: (only a push that carried one), created: (when
// it was received) and service:.
var PushLogFilter = query.List{Name: "push", Fields: []query.Field{query.State, query.Amount, query.Created, query.Service},
	States: []string{OutcomeApplied, OutcomeConfirmed, OutcomeIgnored, OutcomeRejected, OutcomeStored}}

// PushPageRow is one push and its position in the log, a cursor.
type PushPageRow struct {
	Push *PushRecord
	Pos  []byte
}

// PushPage is one window of the push log.
type PushPage struct {
	Rows []PushPageRow
	// Total is the number of pushes that pass the query, -1 when the
	// engine did not count them (PushCount does).
	Total      int
	Less, More bool
}

// PushPosLen is the length of a push's position.
const PushPosLen = 17

// PushPos is a push's position in the log: when it was received (Unix
// nanoseconds, the sign bit flipped so that the bytes sort as the times),
// then 0 for a stored push and 1 for a rejected one (their IDs are
// numbered apart), then its ID. Every push has one, and no two share it.
func PushPos(dst []byte, p *PushRecord) []byte {
	return PushPosOf(dst, p.ReceivedAt.UnixNano(), p.Rejected, p.ID)
}

// PushPosOf is PushPos from its parts.
func PushPosOf(dst []byte, receivedNano int64, rejected bool, id uint64) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(receivedNano)^(1<<63))
	var r byte
	if rejected {
		r = 1
	}
	dst = append(dst, r)
	return binary.BigEndian.AppendUint64(dst, id)
}

// SplitPushPos is PushPosOf's parts; ok is false for bytes that are no
// position.
func SplitPushPos(pos []byte) (received time.Time, rejected bool, id uint64, ok bool) {
	if len(pos) != PushPosLen || pos[8] > 1 {
		return time.Time{}, false, 0, false
	}
	nano := int64(binary.BigEndian.Uint64(pos) ^ (1 << 63))
	return time.Unix(0, nano), pos[8] == 1, binary.BigEndian.Uint64(pos[9:]), true
}

// PushInStatus reports whether p is of status s (one of PushStatuses, ""
// for all).
func PushInStatus(p *PushRecord, s string) bool {
	switch s {
	case "":
		return true
	case "rejected":
		return p.Rejected
	case "ignored":
		w, _ := p.Outcome()
		return w == OutcomeIgnored
	}
	if p.Rejected {
		return false
	}
	c := p.Status.Code
	switch s {
	case "success":
		return c == api.StatusSuccess
	case "pending":
		return api.IsPending(c)
	case "failed":
		return c != 0 && c != api.StatusSuccess && !api.IsPending(c)
	}
	return false
}

// PushLogText is the text of a push the filter searches, folded: a list
// folds it once per row, not once per row and keystroke.
type PushLogText struct{ words, service string }

// FoldPushLog folds the text of p that KeepPushLogText searches: words in
// its envelope, kind, key, invoice, service, reason and why it was
// ignored, service: in its service.
func FoldPushLog(p *PushRecord) PushLogText {
	return PushLogText{words: FoldFields(p.Envelope, p.Kind, p.Key, p.Invoice, p.Service, p.Reason, p.Ignored),
		service: FoldFields(p.Service)}
}

// KeepPushLogText reports whether p, whose text t is folded, passes the
// filter w (checked against PushLogFilter).
func KeepPushLogText(p *PushRecord, t *PushLogText, w *query.Query) bool {
	if w.State != "" {
		if word, _ := p.Outcome(); word != w.State {
			return false
		}
	}
	if w.Amount != nil && (!p.HasAmount || !w.Amount.Contains(p.Amount)) {
		return false
	}
	if !InCreated(w.Created, p.ReceivedAt) {
		return false
	}
	if len(w.Service) > 0 && !FoldedHasAll(t.service, w.Service) {
		return false
	}
	return len(w.Words) == 0 || FoldedHasAll(t.words, w.Words)
}

// KeepPushRow reports whether p passes every narrowing of q: its
// envelope, kind, status and filter.
func KeepPushRow(p *PushRecord, q *PushQuery) bool {
	if q.Envelope != "" && p.Envelope != q.Envelope || q.Kind != "" && p.Kind != q.Kind || !PushInStatus(p, q.Status) {
		return false
	}
	if q.Where.Empty() {
		return true
	}
	t := FoldPushLog(p)
	return KeepPushLogText(p, &t, &q.Where)
}

// Narrowed reports whether q keeps fewer pushes than the whole log.
func (q *PushQuery) Narrowed() bool {
	return q.Envelope != "" || q.Kind != "" || q.Status != "" || !q.Where.Empty()
}

// FoldedHasAll reports whether text (folded like a search text) holds
// every value folded.
func FoldedHasAll(text string, values []string) bool {
	for _, v := range values {
		if !strings.Contains(text, FoldValue(v)) {
			return false
		}
	}
	return true
}

// FoldFields folds each field (and its German transliteration, when it
// has one), each ended by a 0 byte.
func FoldFields(fields ...string) string {
	var f strings.Builder
	for _, s := range fields {
		f.WriteString(FoldValue(s))
		if g, ok := FoldGerman(s); ok {
			f.WriteString(" " + g)
		}
		f.WriteByte(0)
	}
	return f.String()
}

// PagePushes answers q over pushes held in memory: a store without the
// log's index, and the reference the engines are tested against.
func PagePushes(all []*PushRecord, q PushQuery) PushPage {
	rows := make([]PushPageRow, 0, len(all))
	for _, p := range all {
		if KeepPushRow(p, &q) {
			rows = append(rows, PushPageRow{Push: p, Pos: PushPos(nil, p)})
		}
	}
	slices.SortFunc(rows, func(a, b PushPageRow) int { return bytes.Compare(a.Pos, b.Pos) })
	if q.Desc {
		slices.Reverse(rows)
	}
	from, to := Window(len(rows), func(i int) []byte { return rows[i].Pos }, &q.PageQuery)
	p := PushPage{Total: len(rows), Less: from > 0, More: to < len(rows)}
	if to > from {
		p.Rows = rows[from:to:to]
	}
	return p
}
