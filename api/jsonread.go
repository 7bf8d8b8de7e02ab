package api

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// jsonReader walks one JSON document for the hand-written push decoder. It
// follows encoding/json's rules exactly (the same syntax, depth limit, key
// folding, null handling and string unescaping), so a body decodes to the
// same value as json.Unmarshal would give; FuzzDecodePushMatchesReflection
// holds it to that. Plain strings are sliced from one copy of the body, so a
// push costs one string allocation instead of one per field.
type jsonReader struct {
	data []byte
	text string // data as a string, for slicing plain strings from
	pos  int
	// keyBuf holds the folded key of the member being decoded.
	keyBuf [32]byte
}

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

func newJSONReader(data []byte) *jsonReader {
	return &jsonReader{data: data, text: string(data)}
}

func (r *jsonReader) syntaxError(what string) error {
	if r.pos >= len(r.data) {
		return fmt.Errorf("unexpected end of JSON input")
	}
	return fmt.Errorf("invalid character %s %s (offset %d)", quoteChar(r.data[r.pos]), what, r.pos)
}

func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}

func (r *jsonReader) skipSpace() {
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return
		}
	}
}

// peek returns the first byte of the next value (0 at the end).
func (r *jsonReader) peek() byte {
	r.skipSpace()
	if r.pos >= len(r.data) {
		return 0
	}
	return r.data[r.pos]
}

// end checks that nothing but white space follows the document.
func (r *jsonReader) end() error {
	r.skipSpace()
	if r.pos < len(r.data) {
		return r.syntaxError("after top-level value")
	}
	return nil
}

// null consumes a null literal if one is next.
func (r *jsonReader) null() (bool, error) {
	if r.peek() != 'n' {
		return false, nil
	}
	return true, r.literal("null")
}

func (r *jsonReader) literal(lit string) error {
	for i := 0; i < len(lit); i++ {
		if r.pos >= len(r.data) || r.data[r.pos] != lit[i] {
			return r.syntaxError("in literal " + lit)
		}
		r.pos++
	}
	return nil
}

// member starts member i of the object whose '{' was consumed: it returns
// the member's key with the reader at its value, or ok false after the
// closing '}'.
func (r *jsonReader) member(i int) (key string, ok bool, err error) {
	c := r.peek()
	if i > 0 {
		switch c {
		case '}':
			r.pos++
			return "", false, nil
		case ',':
			r.pos++
			c = r.peek()
		default:
			return "", false, r.syntaxError("after object key:value pair")
		}
	} else if c == '}' {
		r.pos++
		return "", false, nil
	}
	if c != '"' {
		return "", false, r.syntaxError("looking for beginning of object key string")
	}
	if key, err = r.str(); err != nil {
		return "", false, err
	}
	if r.peek() != ':' {
		return "", false, r.syntaxError("after object key")
	}
	r.pos++
	r.skipSpace()
	return key, true, nil
}

// element starts element i of the array whose '[' was consumed: ok false
// after the closing ']'.
func (r *jsonReader) element(i int) (bool, error) {
	c := r.peek()
	if i > 0 {
		switch c {
		case ']':
			r.pos++
			return false, nil
		case ',':
			r.pos++
			r.skipSpace()
			return true, nil
		}
		return false, r.syntaxError("after array element")
	}
	if c == ']' {
		r.pos++
		return false, nil
	}
	return true, nil
}

// open consumes the '{' or '[' that must come next; a value of another kind
// is a type error for what (the field being decoded), after the value has
// been checked for syntax.
func (r *jsonReader) open(delim byte, depth int, what string) error {
	c := r.peek()
	if c == delim {
		if depth > maxDepth {
			return fmt.Errorf("exceeded max depth (offset %d)", r.pos)
		}
		r.pos++
		return nil
	}
	want := "an object"
	if delim == '[' {
		want = "an array"
	}
	return r.typeError(depth, what, want)
}

// typeError skips the value at the reader (so a syntax error later in the
// body is reported as encoding/json would not, but an error either way) and
// names what was expected where.
func (r *jsonReader) typeError(depth int, what, want string) error {
	got := kindOf(r.peek())
	if _, err := r.skip(depth); err != nil {
		return err
	}
	return &fieldError{what, "want " + want + ", got " + got}
}

func kindOf(c byte) string {
	switch c {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// str reads a string value. Strings without escapes are sliced from the body;
// the others are unescaped by encoding/json itself (after the syntax check
// here), so invalid UTF-8 and lone surrogates become U+FFFD as they do there.
func (r *jsonReader) str() (string, error) {
	start := r.pos
	plain, err := r.skipString()
	if err != nil {
		return "", err
	}
	raw := r.data[start:r.pos]
	if plain {
		return r.text[start+1 : r.pos-1], nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("string at offset %d: %w", start, err)
	}
	return s, nil
}

// skipString moves past the string at the reader, checking its syntax;
// plain reports that it holds no escapes and only valid UTF-8, so its bytes
// are its value.
func (r *jsonReader) skipString() (plain bool, err error) {
	if r.pos >= len(r.data) || r.data[r.pos] != '"' {
		return false, r.syntaxError("looking for beginning of string")
	}
	start := r.pos
	r.pos++
	plain = true
	ascii := true
	for r.pos < len(r.data) {
		c := r.data[r.pos]
		switch {
		case c == '"':
			r.pos++
			if !ascii && plain && !utf8.Valid(r.data[start:r.pos]) {
				plain = false
			}
			return plain, nil
		case c < 0x20:
			return false, r.syntaxError("in string literal")
		case c == '\\':
			plain = false
			r.pos++
			if r.pos >= len(r.data) {
				return false, r.syntaxError("")
			}
			switch r.data[r.pos] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				r.pos++
			case 'u':
				r.pos++
				for k := 0; k < 4; k++ {
					if r.pos >= len(r.data) || !isHex(r.data[r.pos]) {
						return false, r.syntaxError("in \\u hexadecimal character escape")
					}
					r.pos++
				}
			default:
				return false, r.syntaxError("in string escape code")
			}
		default:
			if c >= utf8.RuneSelf {
				ascii = false
			}
			r.pos++
		}
	}
	return false, r.syntaxError("")
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// number moves past a number, checking JSON's grammar, and returns its text.
func (r *jsonReader) number() ([]byte, error) {
	start := r.pos
	d := r.data
	if r.pos < len(d) && d[r.pos] == '-' {
		r.pos++
	}
	switch {
	case r.pos < len(d) && d[r.pos] == '0':
		r.pos++
	case r.pos < len(d) && '1' <= d[r.pos] && d[r.pos] <= '9':
		r.digits()
	default:
		return nil, r.syntaxError("in numeric literal")
	}
	if r.pos < len(d) && d[r.pos] == '.' {
		r.pos++
		if r.digits() == 0 {
			return nil, r.syntaxError("after decimal point in numeric literal")
		}
	}
	if r.pos < len(d) && (d[r.pos] == 'e' || d[r.pos] == 'E') {
		r.pos++
		if r.pos < len(d) && (d[r.pos] == '+' || d[r.pos] == '-') {
			r.pos++
		}
		if r.digits() == 0 {
			return nil, r.syntaxError("in exponent of numeric literal")
		}
	}
	return d[start:r.pos], nil
}

func (r *jsonReader) digits() int {
	n := 0
	for r.pos < len(r.data) && '0' <= r.data[r.pos] && r.data[r.pos] <= '9' {
		r.pos++
		n++
	}
	return n
}

// skipText is skip that also returns the value's text, sliced from the body.
func (r *jsonReader) skipText(depth int) ([]byte, string, error) {
	r.skipSpace()
	start := r.pos
	raw, err := r.skip(depth)
	if err != nil {
		return nil, "", err
	}
	return raw, r.text[start:r.pos], nil
}

// skip moves past any value, checking its syntax, and returns its text.
// depth is the nesting depth the value would open.
func (r *jsonReader) skip(depth int) ([]byte, error) {
	c := r.peek()
	start := r.pos
	switch c {
	case '{', '[':
		if depth > maxDepth {
			return nil, fmt.Errorf("exceeded max depth (offset %d)", r.pos)
		}
		r.pos++
		for i := 0; ; i++ {
			var ok bool
			var err error
			if c == '{' {
				_, ok, err = r.member(i)
			} else {
				ok, err = r.element(i)
			}
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			if _, err := r.skip(depth + 1); err != nil {
				return nil, err
			}
		}
	case '"':
		if _, err := r.skipString(); err != nil {
			return nil, err
		}
	case 't':
		if err := r.literal("true"); err != nil {
			return nil, err
		}
	case 'f':
		if err := r.literal("false"); err != nil {
			return nil, err
		}
	case 'n':
		if err := r.literal("null"); err != nil {
			return nil, err
		}
	default:
		if c != '-' && (c < '0' || c > '9') {
			return nil, r.syntaxError("looking for beginning of value")
		}
		return r.number()
	}
	return r.data[start:r.pos], nil
}

// stringField reads a string field: null leaves it as it was.
func (r *jsonReader) stringField(dst *string, depth int, what string) error {
	switch r.peek() {
	case '"':
		s, err := r.str()
		if err != nil {
			return err
		}
		*dst = s
		return nil
	case 'n':
		_, err := r.null()
		return err
	}
	return r.typeError(depth, what, "a string")
}

// stringPtrField reads a *string field: null sets it to nil.
func (r *jsonReader) stringPtrField(dst **string, depth int, what string) error {
	if isNull, err := r.null(); isNull || err != nil {
		*dst = nil
		return err
	}
	if r.peek() != '"' {
		return r.typeError(depth, what, "a string")
	}
	s, err := r.str()
	if err != nil {
		return err
	}
	*dst = &s
	return nil
}

func (r *jsonReader) boolField(dst *bool, depth int, what string) error {
	switch r.peek() {
	case 't':
		*dst = true
		return r.literal("true")
	case 'f':
		*dst = false
		return r.literal("false")
	case 'n':
		_, err := r.null()
		return err
	}
	return r.typeError(depth, what, "a boolean")
}

func (r *jsonReader) intField(dst *int, depth int, what string) error {
	switch c := r.peek(); {
	case c == 'n':
		_, err := r.null()
		return err
	case c == '-' || '0' <= c && c <= '9':
		text, err := r.number()
		if err != nil {
			return err
		}
		n, err := strconv.ParseInt(string(text), 10, strconv.IntSize)
		if err != nil {
			return &fieldError{what, "want a whole number, got " + string(text)}
		}
		*dst = int(n)
		return nil
	}
	return r.typeError(depth, what, "a number")
}

func (r *jsonReader) intPtrField(dst **int, depth int, what string) error {
	if isNull, err := r.null(); isNull || err != nil {
		*dst = nil
		return err
	}
	var n int
	if *dst != nil {
		n = **dst
	}
	if err := r.intField(&n, depth, what); err != nil {
		return err
	}
	*dst = &n
	return nil
}

// foldKey folds an object key the way encoding/json matches field names
// (bytes.EqualFold): ASCII upper case, other runes through ToUpper(ToLower).
// Keys longer than the longest field name cannot match and fold to "".
func foldKey(buf *[32]byte, key string) []byte {
	out := buf[:0]
	for i := 0; i < len(key); {
		c := key[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			if len(out) == len(buf) {
				return nil
			}
			out = append(out, c)
			i++
			continue
		}
		rn, n := utf8.DecodeRuneInString(key[i:])
		rn = unicode.ToUpper(unicode.ToLower(rn))
		if len(out)+utf8.RuneLen(rn) > len(buf) {
			return nil
		}
		out = utf8.AppendRune(out, rn)
		i += n
	}
	return out
}
