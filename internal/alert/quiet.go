package alert

import (
	"context"
	"fmt"
	"strings"
	"time"

	"paydesk/store"
)

// Hours are a shop's opening hours: the weekdays it is open and, on each,
// from what time to what time (local). A shop whose pushes stop in those
// hours has lost its gateway; at night silence is normal.
type Hours struct {
	Days        [7]bool // by time.Weekday
	Open, Close time.Duration
}

var dayNames = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// ParseHours reads opening hours: "08:00-20:00" (every day) or with days,
// "mon-fri 08:00-18:00" or "mon,wed,sat 09:00-17:30". The hours are the
// machine's local time.
func ParseHours(s string) (Hours, error) {
	var h Hours
	f := strings.Fields(strings.ToLower(strings.TrimSpace(s)))
	var days, span string
	switch len(f) {
	case 1:
		span = f[0]
		for i := range h.Days {
			h.Days[i] = true
		}
	case 2:
		days, span = f[0], f[1]
		for _, part := range strings.Split(days, ",") {
			lo, hi, isRange := strings.Cut(part, "-")
			a, b := dayIndex(lo), dayIndex(hi)
			if !isRange {
				b = a
			}
			if a < 0 || b < 0 {
				return Hours{}, fmt.Errorf("opening-hours %q: %q is not a day (mon, tue, …, sun, or a range mon-fri)", s, part)
			}
			for d := a; ; d = (d + 1) % 7 {
				h.Days[d] = true
				if d == b {
					break
				}
			}
		}
	default:
		return Hours{}, fmt.Errorf("opening-hours %q: give hours (08:00-20:00), with days before them if not every day (mon-fri 08:00-18:00)", s)
	}
	lo, hi, ok := strings.Cut(span, "-")
	var err error
	if ok {
		if h.Open, err = clock(lo); err == nil {
			h.Close, err = clock(hi)
		}
	}
	if !ok || err != nil || h.Close <= h.Open {
		return Hours{}, fmt.Errorf("opening-hours %q: hours must be HH:MM-HH:MM, opening before closing (08:00-20:00)", s)
	}
	return h, nil
}

func dayIndex(s string) int {
	for i, d := range dayNames {
		if s == d {
			return i
		}
	}
	return -1
}

func clock(s string) (time.Duration, error) {
	t, err := time.Parse("15:04", s)
	if err != nil {
		return 0, err
	}
	return time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute, nil
}

// opened is when the shop opened on the day of now, and whether it is open
// at now.
func (h Hours) opened(now time.Time) (time.Time, bool) {
	mid := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	from, to := mid.Add(h.Open), mid.Add(h.Close)
	return from, h.Days[now.Weekday()] && !now.Before(from) && now.Before(to)
}

// PushSource is what Quiet reads (*store.DB has it).
type PushSource interface {
	Pushes(ctx context.Context, limit int, beforeID uint64) ([]*store.PushRecord, error)
}

// quietLook is how many of the newest pushes Quiet reads to find the last
// one the gateway sent (what sync learned was not sent).
const quietLook = 200

// Quiet is the alert "nothing received for after in opening hours": the
// shop is open, and since the later of its opening today and the last push
// the gateway sent, after has passed. Nil when that is not so (or after is
// 0). The alert lasts until a push comes or the shop closes.
func Quiet(ctx context.Context, src PushSource, now time.Time, after time.Duration, hours Hours) (*Alert, error) {
	if after <= 0 {
		return nil, nil
	}
	opened, open := hours.opened(now)
	if !open {
		return nil, nil
	}
	recs, err := src.Pushes(ctx, quietLook, 0)
	if err != nil {
		return nil, fmt.Errorf("alerts: pushes: %w", err)
	}
	var last time.Time
	for _, r := range recs {
		if !r.LearnedBySync() {
			last = r.ReceivedAt
			break
		}
	}
	since := opened
	if last.After(since) {
		since = last
	}
	if now.Sub(since) < after {
		return nil, nil
	}
	what := "no push since the shop opened at " + opened.Format("15:04")
	if !last.IsZero() {
		what = "the last push came at " + last.Local().Format("2006-01-02 15:04")
	}
	return &Alert{ID: "quiet/" + since.UTC().Format(time.RFC3339), Kind: "quiet", Subject: "pushes", Since: since,
		Text: fmt.Sprintf("nothing received for %s in opening hours (%s): is the gateway's push URL still paydesk's, and is paydesk listen reachable?",
			minutes(now.Sub(since)), what)}, nil
}

// minutes words a silence: "45m", "2h05m".
func minutes(d time.Duration) string {
	m := int(d / time.Minute)
	if m < 60 {
		return fmt.Sprintf("%dm", m)
	}
	return fmt.Sprintf("%dh%02dm", m/60, m%60)
}
