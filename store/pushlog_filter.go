package store

import (
	"strconv"

	"paydesk/internal/query"
	"paydesk/store/domain"
)

// The filters of the push log and the gateway log, the same on the
// command line (--filter) and in the console (/): one function keeps a
// record for both, so both show the same rows.

// PushLogFilter is what the push log's filter takes: PushFilter and
// state:, which is the push's outcome word (Outcome: applied, confirmed,
// ignored, rejected, stored). The push log's own meaning lives in
// store/domain/pushpage.go, with its order and its reference pager.
var PushLogFilter = domain.PushLogFilter

// KeepPushLog reports whether a push (stored or rejected) passes w,
// checked against PushLogFilter: as KeepPush, and state: its outcome.
func KeepPushLog(p *PushRecord, w *query.Query) bool {
	t := FoldPushLog(p)
	return KeepPushLogText(p, &t, w)
}

// PushLogText is the text of a push the filter searches, folded.
type PushLogText = domain.PushLogText

// FoldPushLog folds the text of p that KeepPushLogText searches.
func FoldPushLog(p *PushRecord) PushLogText { return domain.FoldPushLog(p) }

// KeepPushLogText is KeepPushLog with p's text folded beforehand.
func KeepPushLogText(p *PushRecord, t *PushLogText, w *query.Query) bool {
	return domain.KeepPushLogText(p, t, w)
}

// ExchangeFilter is what the gateway log's filter takes.
var ExchangeFilter = query.List{Name: "gateway log", Fields: []query.Field{query.Created, query.Service}}

// KeepExchange reports whether an exchange with the gateway passes w
// (checked against ExchangeFilter): words in its action, service, URL,
// error and HTTP status; created is when it was sent.
func KeepExchange(x *Exchange, w *query.Query) bool {
	if !inCreated(w.Created, x.Time) {
		return false
	}
	if len(w.Service) > 0 && !foldedHasAll(foldFields(x.Service), w.Service) {
		return false
	}
	return len(w.Words) == 0 || foldedHasAll(foldFields(x.Action, x.Service, x.Method, x.URL, x.Error, strconv.Itoa(x.HTTPStatus)), w.Words)
}
