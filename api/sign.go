package api

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Credentials are a website key and its secret. The secret never leaves
// this value in text form: String and GoString redact it.
type Credentials struct {
	WebsiteKey string
	SecretKey  string
}

// String shows the website key only.
func (c Credentials) String() string { return "websiteKey=" + c.WebsiteKey + " secretKey=[redacted]" }

// GoString keeps %#v from printing the secret.
func (c Credentials) GoString() string { return "api.Credentials{" + c.String() + "}" }

// MaxClockSkew is how far a signature's timestamp may be from now.
const MaxClockSkew = 5 * time.Minute

// Reasons a signature fails; callers branch on them with errors.Is.
var (
	ErrSignatureMissing   = errors.New("no Authorization header")
	ErrSignatureMalformed = errors.New("Authorization header is not \"hmac key:signature:nonce:timestamp\"")
	ErrUnknownWebsiteKey  = errors.New("unknown website key")
	ErrStaleTimestamp     = errors.New("timestamp outside the allowed window")
	ErrSignatureMismatch  = errors.New("signature does not match")
)

// Authorization is a parsed "hmac websiteKey:signature:nonce:timestamp" header.
type Authorization struct {
	WebsiteKey string
	Signature  string
	Nonce      string
	Timestamp  int64
}

// String renders the header value.
func (a Authorization) String() string {
	return "hmac " + a.WebsiteKey + ":" + a.Signature + ":" + a.Nonce + ":" + strconv.FormatInt(a.Timestamp, 10)
}

// ParseAuthorization parses the header value. The "hmac " scheme word is
// matched case-insensitively.
func ParseAuthorization(h string) (Authorization, error) {
	h = strings.TrimSpace(h)
	if h == "" {
		return Authorization{}, ErrSignatureMissing
	}
	scheme, rest, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "hmac") {
		return Authorization{}, fmt.Errorf("%w: scheme is not hmac", ErrSignatureMalformed)
	}
	parts := strings.Split(strings.TrimSpace(rest), ":")
	if len(parts) != 4 {
		return Authorization{}, fmt.Errorf("%w: %d fields, want 4", ErrSignatureMalformed, len(parts))
	}
	for i, name := range []string{"website key", "signature", "nonce", "timestamp"} {
		if parts[i] == "" {
			return Authorization{}, fmt.Errorf("%w: empty %s", ErrSignatureMalformed, name)
		}
	}
	ts, err := strconv.ParseInt(parts[3], 10, 64)
	if err != nil || ts < 0 {
		return Authorization{}, fmt.Errorf("%w: timestamp is not Unix seconds", ErrSignatureMalformed)
	}
	return Authorization{WebsiteKey: parts[0], Signature: parts[1], Nonce: parts[2], Timestamp: ts}, nil
}

// EncodeURI turns "host[:port]/path[?query]" into the signed form: the
// whole string escaped as JavaScript's encodeURIComponent does, then
// lower-cased, escapes included ("127.0.0.1%3a8800%2fjson%2ftransaction").
func EncodeURI(hostPath string) string {
	return string(appendEncodedURI(make([]byte, 0, len(hostPath)*3/2), hostPath))
}

func appendEncodedURI(b []byte, hostPath string) []byte {
	const hexDigits = "0123456789abcdef"
	for i := 0; i < len(hostPath); i++ {
		c := hostPath[i]
		switch {
		case 'A' <= c && c <= 'Z':
			b = append(b, c+'a'-'A')
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', strings.IndexByte("-_.!~*'()", c) >= 0:
			b = append(b, c)
		default:
			b = append(b, '%', hexDigits[c>>4], hexDigits[c&15])
		}
	}
	return b
}

// HostPath drops the scheme of a URL: "http://h:1/p" → "h:1/p".
func HostPath(rawURL string) string {
	if i := strings.Index(rawURL, "://"); i >= 0 {
		return rawURL[i+3:]
	}
	return rawURL
}

// ContentHash is base64(MD5(body)), or "" for an empty body.
func ContentHash(body []byte) string { return string(appendContentHash(nil, body)) }

func appendContentHash(b, body []byte) []byte {
	if len(body) == 0 {
		return b
	}
	sum := md5.Sum(body)
	return base64.StdEncoding.AppendEncode(b, sum[:])
}

// StringToSign concatenates the signed fields without separators; the
// timestamp comes before the nonce although the header lists them the other
// way round.
func StringToSign(websiteKey, method, encodedURI string, timestamp int64, nonce, contentHash string) string {
	return websiteKey + strings.ToUpper(method) + encodedURI + strconv.FormatInt(timestamp, 10) + nonce + contentHash
}

// signature is base64(HMAC-SHA256(secret, stringToSign)).
func signature(secret, stringToSign string) string {
	s := newSigner(secret)
	return string(s.sum(append(s.buf[:0], stringToSign...)))
}

// Sign computes the Authorization for a request or push to hostPath
// ("host[:port]/path") with the given body, nonce and Unix timestamp.
func Sign(c Credentials, method, hostPath string, body []byte, nonce string, timestamp int64) Authorization {
	sig := newSigner(c.SecretKey).sign(c.WebsiteKey, method, hostPath, timestamp, nonce, body)
	return Authorization{WebsiteKey: c.WebsiteKey, Signature: string(sig), Nonce: nonce, Timestamp: timestamp}
}

// NewNonce returns a fresh random nonce: 32 hex characters.
func NewNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// Verifier checks signatures of incoming requests or pushes.
type Verifier struct {
	// Secret returns the secret of a website key, false if it is unknown.
	Secret func(websiteKey string) (string, bool)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MaxSkew bounds |now - timestamp|; zero means MaxClockSkew.
	MaxSkew time.Duration

	signers *signerPool // nil (a literal): a signer is made for each verification
}

// NewVerifier returns a Verifier that looks secrets up with secret and keeps
// its keyed HMACs for reuse (a Verifier built as a literal keys one for
// every verification).
func NewVerifier(secret func(websiteKey string) (string, bool)) Verifier {
	return Verifier{Secret: secret, signers: &signerPool{}}
}

// VerifierFor accepts exactly one set of credentials.
func VerifierFor(c Credentials) Verifier {
	return NewVerifier(func(k string) (string, bool) {
		if k != c.WebsiteKey {
			return "", false
		}
		return c.SecretKey, true
	})
}

// signer computes signatures with one secret: a keyed HMAC and a buffer
// for the string to sign. Keying an HMAC (two hash states and the pads)
// was most of what a verification allocated, so a push listener keeps
// signers for reuse.
type signer struct {
	mac hash.Hash
	buf []byte
}

// signerPool keeps signers by secret.
type signerPool struct{ pools sync.Map } // secret → *sync.Pool of *signer

func newSigner(secret string) *signer {
	return &signer{mac: hmac.New(sha256.New, []byte(secret)), buf: make([]byte, 0, 256)}
}

func (sp *signerPool) get(secret string) *signer {
	if sp != nil {
		if p, ok := sp.pools.Load(secret); ok {
			if s, ok := p.(*sync.Pool).Get().(*signer); ok {
				return s
			}
		}
	}
	return newSigner(secret)
}

func (sp *signerPool) put(secret string, s *signer) {
	if sp == nil {
		return
	}
	p, ok := sp.pools.Load(secret)
	if !ok {
		p, _ = sp.pools.LoadOrStore(secret, &sync.Pool{})
	}
	p.(*sync.Pool).Put(s)
}

// sign returns the signature of the string StringToSign builds from these
// arguments (hostPath unencoded, body unhashed), in the signer's buffer.
func (s *signer) sign(websiteKey, method, hostPath string, timestamp int64, nonce string, body []byte) []byte {
	b := append(s.buf[:0], websiteKey...)
	for i := 0; i < len(method); i++ {
		c := method[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		b = append(b, c)
	}
	b = appendEncodedURI(b, hostPath)
	b = strconv.AppendInt(b, timestamp, 10)
	b = append(b, nonce...)
	return s.sum(appendContentHash(b, body))
}

// sum returns base64(HMAC(stringToSign)), appended to stringToSign, which
// must be the signer's buffer.
func (s *signer) sum(stringToSign []byte) []byte {
	s.mac.Reset()
	s.mac.Write(stringToSign)
	mark := len(stringToSign)
	b := s.mac.Sum(stringToSign)
	b = base64.StdEncoding.AppendEncode(b, b[mark:])
	s.buf = b
	return b[mark+sha256.Size:]
}

// matches reports, in constant time, whether signature is what sign
// computes.
func (s *signer) matches(signature, websiteKey, method, hostPath string, timestamp int64, nonce string, body []byte) bool {
	want := s.sign(websiteKey, method, hostPath, timestamp, nonce, body)
	return len(want) == len(signature) && subtle.ConstantTimeCompare(want, []byte(signature)) == 1
}

// Verify checks an Authorization header value over method, hostPath and
// body. The error wraps one of the Err* reasons and says what was off.
func (v Verifier) Verify(header, method, hostPath string, body []byte) (Authorization, error) {
	a, secret, err := v.precheck(header)
	if err != nil {
		return a, err
	}
	sg := v.signers.get(secret)
	ok := sg.matches(a.Signature, a.WebsiteKey, method, hostPath, a.Timestamp, a.Nonce, body)
	v.signers.put(secret, sg)
	if !ok {
		return a, fmt.Errorf("%w over %s %s with a body of %d bytes (wrong secret, altered body or different URL)",
			ErrSignatureMismatch, strings.ToUpper(method), truncate(hostPath, 80), len(body))
	}
	return a, nil
}

// Precheck does the checks of Verify that need no body: the header's
// form, a known website key and a timestamp within the window. A server
// that faces the internet runs it before it reads a body, so a request
// that cannot be genuine costs it no read; Verify repeats these checks.
func (v Verifier) Precheck(header string) (Authorization, error) {
	a, _, err := v.precheck(header)
	return a, err
}

func (v Verifier) precheck(header string) (Authorization, string, error) {
	a, err := ParseAuthorization(header)
	if err != nil {
		return a, "", err
	}
	secret, ok := v.Secret(a.WebsiteKey)
	if !ok {
		return a, "", fmt.Errorf("%w %q", ErrUnknownWebsiteKey, truncate(a.WebsiteKey, 40))
	}
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	skew := v.MaxSkew
	if skew == 0 {
		skew = MaxClockSkew
	}
	// Compare the timestamp with now ± the limit rather than take their
	// difference: a timestamp near either end of int64 overflows
	// now−timestamp (and time.Duration(off)*time.Second), which once let
	// now+9223372037 s through as "0 s off".
	nowUnix, limit := now().Unix(), int64(skew/time.Second)
	if a.Timestamp < nowUnix-limit || a.Timestamp > nowUnix+limit {
		return a, "", fmt.Errorf("%w: %s, limit %ds", ErrStaleTimestamp, skewText(nowUnix, a.Timestamp), limit)
	}
	return a, secret, nil
}

// skewText says how far ts is from now without overflowing: a difference
// beyond a year is only said to be that far off.
func skewText(now, ts int64) string {
	const year = 366 * 24 * 3600
	switch {
	case ts > now+year || ts < now-year:
		return "more than a year off"
	case ts > now:
		return fmt.Sprintf("%ds off", ts-now)
	default:
		return fmt.Sprintf("%ds off", now-ts)
	}
}
