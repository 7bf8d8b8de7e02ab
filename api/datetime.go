package api

import (
	"encoding/json"
	"fmt"
	"time"
	// The gateway writes local Dutch time without an offset; the zone must be
	// known on machines without a tz database.
	_ "time/tzdata"
)

// gatewayZone is where a timestamp without an offset is read: the family's
// gateway writes responses in Dutch local time and adds the offset only in
// pushes.
var gatewayZone = func() *time.Location {
	loc, err := time.LoadLocation("Europe/Amsterdam")
	if err != nil {
		return time.UTC
	}
	return loc
}()

// DateTime is Status.DateTime: ISO 8601, with or without a UTC offset. The
// text as received is kept so a decoded envelope re-encodes unchanged.
type DateTime struct {
	time.Time
	raw string
}

// Layouts of the two forms the sandbox writes.
const (
	layoutLocal  = "2006-01-02T15:04:05"
	layoutOffset = "2006-01-02T15:04:05-07:00"
)

// NewDateTime formats t as the gateway does: with its offset for pushes,
// as Dutch local time without an offset for responses.
func NewDateTime(t time.Time, withOffset bool) DateTime {
	t = t.In(gatewayZone).Truncate(time.Second)
	if withOffset {
		return DateTime{Time: t, raw: t.Format(layoutOffset)}
	}
	return DateTime{Time: t, raw: t.Format(layoutLocal)}
}

// ParseDateTime reads the forms the family sends.
func ParseDateTime(s string) (DateTime, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700"} {
		if t, err := time.Parse(layout, s); err == nil {
			return DateTime{Time: t, raw: s}, nil
		}
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, gatewayZone); err == nil {
			return DateTime{Time: t, raw: s}, nil
		}
	}
	return DateTime{}, fmt.Errorf("date time %q: not ISO 8601", truncate(s, 40))
}

// String is the text as received or written.
func (d DateTime) String() string {
	if d.raw != "" {
		return d.raw
	}
	if d.Time.IsZero() {
		return ""
	}
	return d.Time.Format(layoutOffset)
}

// MarshalJSON writes the timestamp as text.
func (d DateTime) MarshalJSON() ([]byte, error) {
	if d.raw == "" && d.Time.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(d.String())
}

// UnmarshalJSON reads a timestamp with or without an offset; null and ""
// leave it zero.
func (d *DateTime) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*d = DateTime{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("date time must be a string")
	}
	if s == "" {
		*d = DateTime{}
		return nil
	}
	v, err := ParseDateTime(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}
