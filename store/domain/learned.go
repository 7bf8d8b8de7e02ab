package domain

// ProvenanceSync is the RemoteAddr of a push record that paydesk sync
// learned from the gateway's InvoiceInfo lookup instead of receiving it as
// a push (internal/gwsync): the push log, the Attention tab and
// `paydesk pushes` tell them apart by it.
const ProvenanceSync = "the gateway's InvoiceInfo (sync)"

// LearnedBySync reports whether the record was learned by sync, not pushed.
func (rec *PushRecord) LearnedBySync() bool { return rec.RemoteAddr == ProvenanceSync }
