package views

import (
	"fmt"

	"paydesk/store"
)

// AuditExport is the audit log as an export table (the Audit tab's screen
// lives in views/logs; the console exports for it).
func AuditExport(entries []store.AuditEntry, format string) ExportIntent {
	es := append([]store.AuditEntry(nil), entries...)
	return ExportIntent{Name: "audit", Format: format, Table: ExportTable{
		Columns: []string{"id", "time", "operator", "action", "target", "amount", "currency", "result", "reason", "op_id"},
		Len:     len(es),
		Row: func(i int) []string {
			e := es[i]
			return []string{fmt.Sprint(e.ID), e.Time.UTC().Format(timeFormatExport), e.Operator, e.Action, e.Target, money(e.Amount),
				e.Currency, e.Result, e.Reason, fmt.Sprint(e.OpID)}
		}}}
}

// ExchangeExport is the gateway log as an export table (no bodies: they
// are in the cache and in the Gateway log tab).
func ExchangeExport(xs []store.Exchange, format string) ExportIntent {
	es := append([]store.Exchange(nil), xs...)
	return ExportIntent{Name: "gateway-log", Format: format, Table: ExportTable{
		Columns: []string{"id", "time", "action", "service", "method", "url", "http_status", "duration_ms", "error"},
		Len:     len(es),
		Row: func(i int) []string {
			x := es[i]
			return []string{fmt.Sprint(x.ID), x.Time.UTC().Format(timeFormatExport), x.Action, x.Service, x.Method, x.URL,
				itoa(x.HTTPStatus), fmt.Sprint(x.Duration.Milliseconds()), x.Error}
		}}}
}
