package api

import (
	"crypto/sha1"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/url"
	"sort"
	"strings"
)

// The family's form replies: when the customer comes back to the shop
// (and in its legacy form pushes) the gateway posts brq_* fields, the
// merchant's add_* (AdditionalParameters) and cust_* (CustomParameters)
// fields, and brq_signature over them.
const (
	ReplySignatureField = "brq_signature"
	// ReplyTimeLayout is brq_timestamp's form.
	ReplyTimeLayout = "2006-01-02 15:04:05"
)

// Errors of VerifyReply.
var (
	ErrReplyUnsigned  = errors.New("the reply has no brq_signature")
	ErrReplySignature = errors.New("brq_signature does not match")
)

// isSignedReplyField reports whether a field takes part in the signature:
// the brq_, add_ and cust_ fields (any case) but brq_signature.
func isSignedReplyField(name string) bool {
	l := strings.ToLower(name)
	if l == ReplySignatureField {
		return false
	}
	return strings.HasPrefix(l, "brq_") || strings.HasPrefix(l, "add_") || strings.HasPrefix(l, "cust_")
}

// replyRank orders characters as the family sorts field names: symbols,
// then digits, then letters, letters without regard to case.
func replyRank(c byte) (int, byte) {
	switch {
	case 'a' <= c && c <= 'z':
		return 2, c
	case 'A' <= c && c <= 'Z':
		return 2, c + 'a' - 'A'
	case '0' <= c && c <= '9':
		return 1, c
	}
	return 0, c
}

func replyLess(a, b string) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		ra, ca := replyRank(a[i])
		rb, cb := replyRank(b[i])
		if ra != rb {
			return ra < rb
		}
		if ca != cb {
			return ca < cb
		}
	}
	return len(a) < len(b)
}

// SortReplyNames sorts field names as the signature orders them (symbols,
// digits, letters; letters without regard to case). A form that posts a
// reply lists its fields in this order: some of the family's SDKs hash the
// fields in the order posted instead of sorting them.
func SortReplyNames(names []string) {
	sort.SliceStable(names, func(i, j int) bool { return replyLess(names[i], names[j]) })
}

// ReplySignature is brq_signature of a form reply: the lower-case hex
// SHA-1 of every signed field written name=value (names as sent, sorted as
// the family sorts them, no separators) followed by the secret key. Fields
// with several values use the first.
func ReplySignature(fields url.Values, secretKey string) string {
	names := make([]string, 0, len(fields))
	for k := range fields {
		if isSignedReplyField(k) {
			names = append(names, k)
		}
	}
	SortReplyNames(names)
	h := sha1.New()
	for _, k := range names {
		h.Write([]byte(k))
		h.Write([]byte{'='})
		h.Write([]byte(fields.Get(k)))
	}
	h.Write([]byte(secretKey))
	return hex.EncodeToString(h.Sum(nil))
}

// SignReply adds brq_signature to fields.
func SignReply(fields url.Values, secretKey string) {
	fields.Del(ReplySignatureField)
	fields.Set(ReplySignatureField, ReplySignature(fields, secretKey))
}

// VerifyReply checks a form reply's brq_signature (matched in any case, as
// the family's handlers do) in constant time.
func VerifyReply(form url.Values, secretKey string) error {
	var got string
	for k, v := range form {
		if strings.EqualFold(k, ReplySignatureField) && len(v) > 0 {
			got = strings.ToLower(v[0])
		}
	}
	if got == "" {
		return ErrReplyUnsigned
	}
	want := ReplySignature(form, secretKey)
	if subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return ErrReplySignature
	}
	return nil
}
