package kvlayout

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store/domain"
)

// The hot records (summaries, pushes) use a small binary encoding: JSON would
// cost most of the time of loading 100,000 list rows. Each record starts with
// a format byte so a later layout can be read beside this one.

const codecV1 = 1

var ErrCorrupt = errors.New("corrupt record")

type enc struct {
	b []byte
	// refs, when set, writes a string equal to one of the last refWindow
	// strings of 3 bytes or more as a reference to it (seen): a record
	// that repeats an e-mail, a line's type or a name takes a byte for it.
	refs bool
	seen []string
}

// refWindow bounds the strings a new one is held against.
const refWindow = 64

func (e *enc) byte(c byte)      { e.b = append(e.b, c) }
func (e *enc) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) bool(v bool) {
	if v {
		e.byte(1)
	} else {
		e.byte(0)
	}
}
func (e *enc) bytes(p []byte) { e.uvarint(uint64(len(p))); e.b = append(e.b, p...) }
func (e *enc) str(s string) {
	if !e.refs {
		e.uvarint(uint64(len(s)))
		e.b = append(e.b, s...)
		return
	}
	if len(s) >= 3 {
		for i := len(e.seen) - 1; i >= 0 && i >= len(e.seen)-refWindow; i-- {
			if e.seen[i] == s {
				e.uvarint(uint64(i)<<1 | 1)
				return
			}
		}
		e.seen = append(e.seen, s)
	}
	e.uvarint(uint64(len(s)) << 1)
	e.b = append(e.b, s...)
}

// time as Unix nanoseconds; the zero time as 0 with a flag byte.
func (e *enc) time(t time.Time) {
	if t.IsZero() {
		e.byte(0)
		return
	}
	e.byte(1)
	e.varint(t.UnixNano())
}

// decimal as coefficient and exponent when the coefficient fits in an
// int64, else as text.
func (e *enc) dec(d decimal.Decimal) {
	if c := d.Coefficient(); c.IsInt64() {
		e.byte(0)
		e.varint(c.Int64())
		e.varint(int64(d.Exponent()))
		return
	}
	e.byte(1)
	e.str(d.String())
}

type decoder struct {
	b   []byte
	err error
	// s, when set, is the whole record as one string: str returns
	// substrings of it, one allocation per record instead of one per field.
	s string
	// refs reads strings as enc.refs writes them. The strings read so far
	// that a reference may name: the first len(seenIn) in the decoder
	// itself, so that a usual record's take no allocation, the rest in
	// seen.
	refs   bool
	nseen  int
	seenIn [24]string
	seen   []string
}

// remember keeps s for the references that follow.
func (d *decoder) remember(s string) {
	if d.nseen < len(d.seenIn) {
		d.seenIn[d.nseen] = s
	} else {
		d.seen = append(d.seen, s)
	}
	d.nseen++
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = ErrCorrupt
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bool() bool { return d.byte() == 1 }

func (d *decoder) raw() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) bytes() []byte {
	p := d.raw()
	if p == nil {
		return nil
	}
	return append([]byte(nil), p...)
}

func (d *decoder) str() string {
	if d.refs {
		return d.refStr()
	}
	if d.s == "" {
		return string(d.raw())
	}
	p := d.raw()
	if d.err != nil {
		return ""
	}
	start := len(d.s) - len(d.b) - len(p)
	return d.s[start : start+len(p)]
}

// refStr reads a string enc.refs wrote: its bytes or a reference.
func (d *decoder) refStr() string {
	v := d.uvarint()
	if d.err != nil {
		return ""
	}
	if v&1 == 1 {
		i := v >> 1
		switch {
		case i >= uint64(d.nseen):
			d.fail()
			return ""
		case i < uint64(len(d.seenIn)):
			return d.seenIn[i]
		}
		return d.seen[i-uint64(len(d.seenIn))]
	}
	n := v >> 1
	if n > uint64(len(d.b)) {
		d.fail()
		return ""
	}
	var s string
	if d.s == "" {
		s = string(d.b[:n])
	} else {
		start := len(d.s) - len(d.b)
		s = d.s[start : start+int(n)]
	}
	d.b = d.b[n:]
	if n >= 3 {
		d.remember(s)
	}
	return s
}

func (d *decoder) time() time.Time {
	if d.byte() == 0 {
		return time.Time{}
	}
	return time.Unix(0, d.varint())
}

func (d *decoder) dec() decimal.Decimal {
	switch d.byte() {
	case 0:
		c := d.varint()
		exp := d.varint()
		if exp < math.MinInt32 || exp > math.MaxInt32 {
			d.fail()
			return decimal.Zero
		}
		return decimal.New(c, int32(exp))
	case 1:
		v, err := decimal.NewFromString(d.str())
		if err != nil {
			d.fail()
		}
		return v
	}
	d.fail()
	return decimal.Zero
}

// EncodeSummary is a list row as the summaries bucket stores it.
func EncodeSummary(s domain.Summary) []byte {
	e := enc{b: make([]byte, 0, 96+len(s.Articles))}
	e.byte(codecV1)
	e.str(s.Key)
	e.str(s.ReservationNumber)
	e.str(s.Invoice)
	e.str(s.Customer)
	e.str(s.Country)
	e.str(s.Currency)
	e.dec(s.Amount)
	e.dec(s.Captured)
	e.dec(s.Remaining)
	e.str(string(s.State))
	e.time(s.Created)
	e.bool(s.OutcomeUnknown)
	e.bool(s.IsTest)
	e.str(s.Articles)
	e.str(s.Email)
	e.str(s.InvoiceNumbers)
	e.bool(s.LinesUnknown)
	return e.b
}

// DecodeSummary reads what EncodeSummary wrote.
func DecodeSummary(b []byte) (domain.Summary, error) {
	d := decoder{b: b, s: string(b)}
	if d.byte() != codecV1 {
		return domain.Summary{}, ErrCorrupt
	}
	s := domain.Summary{Key: d.str(), ReservationNumber: d.str(), Invoice: d.str(), Customer: d.str(), Country: d.str(),
		Currency: d.str(), Amount: d.dec(), Captured: d.dec(), Remaining: d.dec(), State: domain.State(d.str()),
		Created: d.time(), OutcomeUnknown: d.bool(), IsTest: d.bool(), Articles: d.str()}
	// Summaries written before the order intake end here; later ones add the
	// e-mail and the provider's invoice numbers for the search.
	if d.err == nil && len(d.b) > 0 {
		s.Email, s.InvoiceNumbers = d.str(), d.str()
		s.LinesUnknown = d.bool()
	}
	return s, d.err
}

// A stored push is a head written inside the transaction (ID and what
// the push changed) and a tail that the caller's goroutine encodes before
// the push joins a group commit. The tail is encoded behind room for the
// head, so the single writer puts the head in front of it instead of
// copying the body.

// headRoom is the room kept for the head: version, ID, applied, and the
// ignored reason and reservation key, which are short.
const headRoom = 128

// EncodePush is a push as the pushes and rejected buckets store it.
func EncodePush(p *domain.PushRecord) []byte { return EncodePushHead(p, EncodePushTail(p)) }

// EncodePushHead returns the stored form of p: its head followed by the
// tail EncodePushTail made.
func EncodePushHead(p *domain.PushRecord, tail []byte) []byte {
	var buf [headRoom]byte
	e := enc{b: buf[:0]}
	e.byte(pushV2)
	e.uvarint(p.ID)
	e.bool(p.Applied)
	e.str(p.Ignored)
	e.str(p.ReservationKey)
	if n := len(e.b); n <= headRoom {
		copy(tail[headRoom-n:], e.b)
		return tail[headRoom-n:]
	}
	out := make([]byte, 0, len(e.b)+len(tail)-headRoom)
	return append(append(out, e.b...), tail[headRoom:]...)
}

// pushV2 is the push record's format since its headers and body are
// packed (pushpack.go); format 1 records (codecV1) are read as they are.
const pushV2 = 2

// EncodePushTail encodes everything of p but the head, behind headRoom
// bytes that EncodePushHead fills: the parsed fields, then the headers and
// body packed.
func EncodePushTail(p *domain.PushRecord) []byte {
	size := headRoom + 320 + len(p.Body)/3 + len(p.RemoteAddr) + len(p.URL) + 2*len(p.Key) + 2*len(p.Invoice) + len(p.Reason)
	e := enc{b: make([]byte, headRoom, size)}
	e.time(p.ReceivedAt)
	e.str(p.RemoteAddr)
	e.str(p.Method)
	e.str(p.URL)
	e.str(p.Envelope)
	e.str(p.Key)
	e.str(p.Invoice)
	e.str(p.Service)
	e.str(p.Kind)
	e.varint(int64(p.Status.Code))
	e.str(p.Status.SubCode)
	e.time(p.Status.Time)
	e.str(p.Currency)
	e.dec(p.Amount)
	e.bool(p.HasAmount)
	e.str(p.WebsiteKey)
	e.str(p.Signature)
	e.bool(p.Rejected)
	e.str(p.Reason)
	e.b = append(e.b, p.Hash[:]...)
	e.uvarint(uint64(max(p.BodySize, 0)))
	e.uvarint(p.Count)
	e.time(p.LastSeen)
	e.packPush(p.Header, p.Body, pushLocal(p))
	return e.b
}

// DecodePush reads what EncodePush wrote, in either format.
func DecodePush(b []byte) (*domain.PushRecord, error) {
	if len(b) > 0 && b[0] == pushV2 {
		return decodePushV2(b, false)
	}
	return decodePushV1(b)
}

// DecodePushFields reads a push record without its headers and body (nil
// in what it returns; a format 1 record is read whole): what the push
// log's filters, counts and index need, without inflating the body.
func DecodePushFields(b []byte) (*domain.PushRecord, error) {
	if len(b) > 0 && b[0] == pushV2 {
		return decodePushV2(b, true)
	}
	return decodePushV1(b)
}

func decodePushV2(b []byte, fieldsOnly bool) (*domain.PushRecord, error) {
	d := decoder{b: b, s: string(b)}
	if fieldsOnly {
		d.s = "" // a string copy of the whole record costs more than the few fields
	}
	d.byte()
	p := &domain.PushRecord{ID: d.uvarint(), Applied: d.bool(), Ignored: d.str(), ReservationKey: d.str()}
	p.ReceivedAt, p.RemoteAddr, p.Method, p.URL = d.time(), d.str(), d.str(), d.str()
	d.pushFields(p)
	bodySize := d.uvarint()
	if bodySize > math.MaxInt32 {
		d.fail()
	}
	p.BodySize = int(bodySize)
	p.Count = d.uvarint()
	p.LastSeen = d.time()
	var local []byte
	if !fieldsOnly {
		local = joinLocal(pushLocal(p))
	}
	p.Header, p.Body = d.unpackPush(fieldsOnly, local)
	if d.err == nil && len(d.b) != 0 {
		d.fail()
	}
	if d.err != nil {
		return nil, d.err
	}
	return p, nil
}

// decodePushV1 reads a push record of format 1: the headers and body as
// they are, between the request's line and the parsed fields.
func decodePushV1(b []byte) (*domain.PushRecord, error) {
	d := decoder{b: b}
	if d.byte() != codecV1 {
		return nil, ErrCorrupt
	}
	p := &domain.PushRecord{ID: d.uvarint(), Applied: d.bool(), Ignored: d.str(), ReservationKey: d.str()}
	p.ReceivedAt, p.RemoteAddr, p.Method, p.URL = d.time(), d.str(), d.str(), d.str()
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		return nil, ErrCorrupt
	}
	if n > 0 {
		p.Header = make(http.Header, n)
	}
	for i := uint64(0); i < n && d.err == nil; i++ {
		k := d.str()
		m := d.uvarint()
		if m > uint64(len(d.b)) {
			return nil, ErrCorrupt
		}
		vs := make([]string, 0, m)
		for j := uint64(0); j < m; j++ {
			vs = append(vs, d.str())
		}
		p.Header[k] = vs
	}
	p.Body = d.bytes()
	d.pushFields(p)
	if p.Rejected && len(d.b) > 0 && d.err == nil {
		p.BodySize = int(d.uvarint())
		p.Count = d.uvarint()
		p.LastSeen = d.time()
	}
	if d.err != nil {
		return nil, d.err
	}
	return p, nil
}

// skipPushRequest passes over what a push record holds after its format
// byte and before its headers (format 1) or parsed fields (format 2): the
// same in both, the ID, what applying it did and the request's line.
func (d *decoder) skipPushRequest() {
	d.uvarint() // ID
	d.bool()    // applied
	d.raw()     // ignored
	d.raw()     // reservation key
	d.time()    // received
	d.raw()     // remote address
	d.raw()     // method
	d.raw()     // URL
}

// pushFields reads a push record's parsed fields and its hash, the same
// in both formats (EncodePushTail writes them after the request's line).
func (d *decoder) pushFields(p *domain.PushRecord) {
	p.Envelope, p.Key, p.Invoice, p.Service, p.Kind = d.str(), d.str(), d.str(), d.str(), d.str()
	p.Status = d.status()
	p.Currency = d.str()
	p.Amount = d.dec()
	p.HasAmount = d.bool()
	p.WebsiteKey = d.str()
	p.Signature = d.str()
	p.Rejected = d.bool()
	p.Reason = d.str()
	if len(d.b) < 32 {
		d.fail()
	} else {
		copy(p.Hash[:], d.b[:32])
		d.b = d.b[32:]
	}
}

func (e *enc) status(s domain.Status) {
	e.varint(int64(s.Code))
	e.str(s.SubCode)
	e.time(s.Time)
}

func (d *decoder) status() domain.Status {
	return domain.Status{Code: int(d.varint()), SubCode: d.str(), Time: d.time()}
}

func (e *enc) strs(ss []string) {
	e.uvarint(uint64(len(ss)))
	for _, s := range ss {
		e.str(s)
	}
}

func (d *decoder) strs() []string {
	n := d.uvarint()
	if n == 0 || n > uint64(len(d.b)) {
		if n > uint64(len(d.b)) {
			d.fail()
		}
		return nil
	}
	out := make([]string, 0, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		out = append(out, d.str())
	}
	return out
}

// Transactions are written once per push that touches them, so they use the
// binary form too (JSON cost a quarter of the writer's time per push).
func EncodeTx(t *domain.Transaction) []byte {
	e := enc{b: make([]byte, 0, 256)}
	e.byte(codecV1)
	e.str(t.Key)
	e.str(string(t.Kind))
	e.str(t.TransactionType)
	e.str(t.ServiceCode)
	e.str(t.Invoice)
	e.str(t.Currency)
	e.dec(t.Amount)
	e.status(t.Status)
	e.bool(t.IsTest)
	e.str(t.ReservationKey)
	e.str(t.ReservationNumber)
	e.str(t.InvoiceNumber)
	e.str(t.PaymentKey)
	e.str(t.Original)
	e.str(t.Group)
	e.uvarint(uint64(len(t.RelatedTransactions)))
	for _, r := range t.RelatedTransactions {
		e.str(r.RelationType)
		e.str(r.RelatedTransactionKey)
	}
	e.uvarint(uint64(len(t.Lines)))
	for _, l := range t.Lines {
		e.str(l.ArticleNumber)
		e.varint(int64(l.Quantity))
	}
	e.bool(t.Lines != nil)
	e.bool(t.FullCapture)
	e.dec(t.Refunded)
	e.strs(t.Refunds)
	e.str(string(t.Provider))
	e.bool(t.HasContact)
	e.dec(t.RemainderAmount)
	e.str(t.CustomerName)
	e.uvarint(t.OpID)
	e.time(t.Created)
	e.time(t.Updated)
	// Appended later: records written before end here.
	e.str(t.Order)
	e.nameValues(t.Additional)
	e.nameValues(t.Custom)
	// Appended later still: records written before end above.
	e.uvarint(uint64(len(t.Parcels)))
	for _, p := range t.Parcels {
		e.str(p.ID)
		e.str(p.Tracking)
	}
	return e.b
}

func (e *enc) nameValues(nv []api.NameValue) {
	e.uvarint(uint64(len(nv)))
	for _, x := range nv {
		e.str(x.Name)
		e.str(string(x.Value))
	}
}

func (d *decoder) nameValues() []api.NameValue {
	n := d.uvarint()
	if n == 0 {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	out := make([]api.NameValue, 0, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		out = append(out, api.NameValue{Name: d.str(), Value: api.FlexString(d.str())})
	}
	return out
}

// DecodeTx reads what EncodeTx wrote.
func DecodeTx(b []byte) (*domain.Transaction, error) {
	if len(b) > 0 && b[0] == '{' {
		var t domain.Transaction
		if err := json.Unmarshal(b, &t); err != nil {
			return nil, err
		}
		return &t, nil
	}
	d := decoder{b: b}
	if d.byte() != codecV1 {
		return nil, ErrCorrupt
	}
	t := &domain.Transaction{Key: d.str(), Kind: domain.Kind(d.str()), TransactionType: d.str(), ServiceCode: d.str(), Invoice: d.str(),
		Currency: d.str(), Amount: d.dec(), Status: d.status(), IsTest: d.bool(), ReservationKey: d.str(),
		ReservationNumber: d.str(), InvoiceNumber: d.str(), PaymentKey: d.str(), Original: d.str(), Group: d.str()}
	if n := d.uvarint(); n > 0 && n <= uint64(len(d.b)) {
		t.RelatedTransactions = make([]api.RelatedTransaction, 0, n)
		for i := uint64(0); i < n && d.err == nil; i++ {
			t.RelatedTransactions = append(t.RelatedTransactions, api.RelatedTransaction{RelationType: d.str(), RelatedTransactionKey: d.str()})
		}
	} else if n > 0 {
		d.fail()
	}
	if n := d.uvarint(); n > 0 && n <= uint64(len(d.b)) {
		t.Lines = make([]api.CaptureLine, 0, n)
		for i := uint64(0); i < n && d.err == nil; i++ {
			t.Lines = append(t.Lines, api.CaptureLine{ArticleNumber: d.str(), Quantity: int(d.varint())})
		}
	} else if n > 0 {
		d.fail()
	}
	if hasLines := d.bool(); hasLines && t.Lines == nil {
		t.Lines = []api.CaptureLine{}
	}
	t.FullCapture = d.bool()
	t.Refunded = d.dec()
	t.Refunds = d.strs()
	t.Provider = api.Provider(d.str())
	t.HasContact = d.bool()
	t.RemainderAmount = d.dec()
	t.CustomerName = d.str()
	t.OpID = d.uvarint()
	t.Created = d.time()
	t.Updated = d.time()
	if d.err == nil && len(d.b) > 0 { // records written before these fields end above
		t.Order = d.str()
		t.Additional = d.nameValues()
		t.Custom = d.nameValues()
	}
	if d.err == nil && len(d.b) > 0 { // records written before the parcels end above
		if n := d.uvarint(); n > 0 && n <= uint64(len(d.b)) {
			t.Parcels = make([]domain.Parcel, 0, n)
			for i := uint64(0); i < n && d.err == nil; i++ {
				t.Parcels = append(t.Parcels, domain.Parcel{ID: d.str(), Tracking: d.str()})
			}
		} else if n > 0 {
			d.fail()
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	return t, nil
}

// EncodeApplyResult is what became of an inbox row's push, as the push
// inbox keeps it for the listener that waits for it.
func EncodeApplyResult(r domain.ApplyResult) []byte {
	e := enc{}
	e.byte(codecV1)
	e.bool(r.Applied)
	e.bool(r.Duplicate)
	e.str(r.Ignored)
	e.str(r.ReservationKey)
	e.uvarint(uint64(len(r.Settled)))
	for _, s := range r.Settled {
		e.uvarint(s)
	}
	return e.b
}

// DecodeApplyResult reads what EncodeApplyResult wrote, for push pushID.
func DecodeApplyResult(pushID uint64, b []byte) (domain.ApplyResult, error) {
	d := decoder{b: b}
	if d.byte() != codecV1 {
		return domain.ApplyResult{}, ErrCorrupt
	}
	r := domain.ApplyResult{ID: pushID, Applied: d.bool(), Duplicate: d.bool(), Ignored: d.str(), ReservationKey: d.str()}
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		return domain.ApplyResult{}, ErrCorrupt
	}
	for i := uint64(0); i < n; i++ {
		r.Settled = append(r.Settled, d.uvarint())
	}
	return r, d.err
}
