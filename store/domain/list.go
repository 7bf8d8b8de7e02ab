package domain

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"paydesk/internal/fold"
	"paydesk/internal/textsafe"
)

// PosKey is a row's position in the order of column col, as bytes that
// sort like the rows: the column's value, the creation time and the key,
// packed (AppendSortKey). The bbolt indexes are keyed by it and the
// cursors are made of it.
func PosKey(dst []byte, col SortBy, s *Summary) []byte {
	switch col {
	case SortInvoice:
		dst = AppendSortString(dst, s.Invoice)
	case SortCustomer:
		dst = AppendSortString(dst, strings.ToLower(s.Customer))
	case SortAmount:
		dst = AppendCents(dst, AmountCents(s))
	case SortState:
		dst = append(dst, StateRank(s.State))
	}
	dst = AppendCreated(dst, s.Created)
	return AppendSortKey(dst, s.Key)
}

// AppendSortString writes s ended by 0x00, which sorts before every other
// byte: "A" comes before "AB". A 0x00 inside s (never in real data) is
// written as 0x01 so it cannot end the value early.
func AppendSortString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 0 {
			c = 1
		}
		dst = append(dst, c)
	}
	return append(dst, 0)
}

// appendInt64 writes v so that the bytes sort like the numbers.
func appendInt64(dst []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(v)^(1<<63))
}

// AppendCents writes an amount in cents as a position of the amount
// column holds it (AmountCents).
func AppendCents(dst []byte, cents int64) []byte { return appendInt64(dst, cents) }

// AppendCreated writes a creation time as a position holds it.
func AppendCreated(dst []byte, t time.Time) []byte { return appendInt64(dst, t.UnixNano()) }

func ReadInt64(b []byte) int64 { return int64(binary.BigEndian.Uint64(b) ^ (1 << 63)) }

// AmountCents is the reserved amount in cents, the amount column's order.
func AmountCents(s *Summary) int64 { return s.Amount.Shift(2).IntPart() }

// stateRanks is the state column's order: the life cycle.
var stateRanks = map[State]byte{
	StateAwaitingCustomer: 0, StateReserved: 1, StatePartlyCaptured: 2,
	StateCaptured: 3, StateClosed: 4, StateCancelled: 5, StateDeclined: 6,
}

// KnownState reports whether s is a state of the life cycle or one of the
// list's own (StateOutcomeUnknown, StateOrderMissing).
func KnownState(s State) bool {
	_, ok := stateRanks[s]
	return ok || s == StateOutcomeUnknown || s == StateOrderMissing
}

func StateRank(s State) byte {
	if r, ok := stateRanks[s]; ok {
		return r
	}
	return 7
}

// ColKind is how a sort column's value is written in a position key.
type ColKind uint8

const (
	ColNone   ColKind = iota // the creation order: no value before the time
	ColString                // appendSortString
	ColInt64                 // appendInt64
	ColByte                  // one byte (the state's rank)
)

// ResCols are the reservation list's sort columns' kinds.
var ResCols = []ColKind{SortCreated: ColNone, SortInvoice: ColString, SortCustomer: ColString, SortAmount: ColInt64, SortState: ColByte}

// PosParts splits a position key into the column's value (without its
// terminator), the creation time and the key: what a PostgreSQL cursor
// compares with.
func PosParts(kind ColKind, pos []byte) (val []byte, created int64, key string, err error) {
	switch kind {
	case ColString:
		i := bytes.IndexByte(pos, 0)
		if i < 0 {
			return nil, 0, "", ErrBadCursor
		}
		val, pos = pos[:i], pos[i+1:]
	case ColInt64:
		if len(pos) < 8 {
			return nil, 0, "", ErrBadCursor
		}
		val, pos = pos[:8], pos[8:]
	case ColByte:
		if len(pos) < 1 {
			return nil, 0, "", ErrBadCursor
		}
		val, pos = pos[:1], pos[1:]
	}
	if len(pos) < 8 {
		return nil, 0, "", ErrBadCursor
	}
	key, err = DecodeSortKey(pos[8:])
	if err != nil {
		return nil, 0, "", ErrBadCursor
	}
	return val, ReadInt64(pos), key, nil
}

var ErrBadCursor = fmt.Errorf("a list cursor that no list made")

// maxSearchText bounds one row's search text (a reservation of a thousand
// article lines is still found by its first ones).
const maxSearchText = 1000

// AppendSearchText appends the row's search text: invoice, customer,
// reservation number, key, e-mail, the provider's invoice numbers and the
// articles (last: a thousand lines are what maxSearchText cuts), cleaned
// and folded (case and accents: "muller" finds "Müller"; a field with
// umlauts also transliterated: "mueller" finds it too, fold.Version 2),
// each field ended by 0x00 so that a word cannot span two fields.
func AppendSearchText(dst []byte, s *Summary, f *fold.Folder) []byte {
	return AppendSearchFields(dst, f, s.Invoice, s.Customer, s.ReservationNumber, s.Key, s.Email, s.InvoiceNumbers, s.Articles)
}

// AppendSearchFields appends a row's search text made of fields, cut at
// maxSearchText.
func AppendSearchFields(dst []byte, f *fold.Folder, fields ...string) []byte {
	start := len(dst)
	for _, field := range fields {
		dst = appendSearch(dst, field, f)
	}
	if len(dst)-start > maxSearchText {
		cut := start + maxSearchText
		for cut > start && !utf8.RuneStart(dst[cut]) {
			cut--
		}
		dst = dst[:cut]
	}
	return dst
}

// appendSearch appends s cleaned and folded, with a separator. ASCII text
// without control characters (nearly all of it) is lower-cased in place;
// anything else goes through textsafe and the Unicode fold.
func appendSearch(dst []byte, s string, f *fold.Folder) []byte {
	mark := len(dst)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || (c < 0x20 && c != '\n') || c == 0x7f {
			clean := textsafe.Clean(strings.ReplaceAll(s, "\n", " "))
			dst = f.Append(dst[:mark], clean)
			// Both folds in the field: "muller" and "mueller" find it.
			if g, ok := f.AppendGerman(append(dst, ' '), clean); ok {
				dst = g
			}
			return append(dst, 0)
		}
		if c == '\n' { // the article lines of a summary
			c = ' '
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return append(dst, 0)
}

// TxPosKey is a transaction's position in the order of column col (see
// posKey).
func TxPosKey(dst []byte, col SortBy, t *Transaction) []byte {
	switch col {
	case TxSortKind:
		dst = AppendSortString(dst, string(t.Kind))
	case TxSortInvoice:
		dst = AppendSortString(dst, t.Invoice)
	case TxSortCustomer:
		dst = AppendSortString(dst, strings.ToLower(t.CustomerName))
	case TxSortAmount:
		dst = AppendCents(dst, t.Amount.Shift(2).IntPart())
	case TxSortStatus:
		dst = appendInt64(dst, int64(t.Status.Code))
	}
	dst = AppendCreated(dst, t.Created)
	return AppendSortKey(dst, t.Key)
}

// AppendTxSearchText appends a transaction's search text: key, invoice,
// reservation number, service, kind ("giftcard pay"), type, customer, the
// provider's invoice number, the original and the group, folded like the
// reservations' (AppendSearchText).
func AppendTxSearchText(dst []byte, t *Transaction, f *fold.Folder) []byte {
	return AppendSearchFields(dst, f, t.Key, t.Invoice, t.ReservationNumber, t.ServiceCode,
		strings.ReplaceAll(string(t.Kind), "_", " "), t.TransactionType, t.CustomerName, t.InvoiceNumber, t.Original, t.Group)
}

// The search text's fields that a field of the language looks in (their
// order in AppendSearchText, AppendTxSearchText).
const (
	ResFieldCustomer = 1
	ResFieldEmail    = 4
	TxFieldService   = 3
	TxFieldCustomer  = 6
)

// WhereState is the list State of a query's state.
func WhereState(s string) State {
	switch s {
	case "order_missing":
		return StateOrderMissing
	case "unknown":
		return StateOutcomeUnknown
	}
	return State(s)
}
