package alert

import (
	"context"
	"strings"
	"testing"
	"time"

	"paydesk/store"
)

func TestParseHours(t *testing.T) {
	all := [7]bool{true, true, true, true, true, true, true}
	weekdays := [7]bool{false, true, true, true, true, true, false}
	for _, tc := range []struct {
		in      string
		days    [7]bool
		open    string
		wantErr string
	}{
		{in: "08:00-20:00", days: all, open: "8h0m0s"},
		{in: "Mon-Fri 08:00-18:00", days: weekdays, open: "8h0m0s"},
		{in: "sat-mon 09:30-12:00", days: [7]bool{true, true, false, false, false, false, true}, open: "9h30m0s"},
		{in: "mon,wed 09:00-17:00", days: [7]bool{false, true, false, true}, open: "9h0m0s"},
		{in: "20:00-08:00", wantErr: "opening before closing"},
		{in: "8-20", wantErr: "HH:MM-HH:MM"},
		{in: "funday 08:00-20:00", wantErr: `"funday" is not a day`},
		{in: "mon fri 08:00-20:00", wantErr: "give hours"},
		{in: "", wantErr: "give hours"},
	} {
		h, err := ParseHours(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "opening-hours") {
				t.Errorf("ParseHours(%q) = %v, want an error naming opening-hours and %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || h.Days != tc.days || h.Open.String() != tc.open {
			t.Errorf("ParseHours(%q) = %+v, %v; want days %v, open %s", tc.in, h, err, tc.days, tc.open)
		}
	}
}

type pushList []*store.PushRecord

func (p pushList) Pushes(ctx context.Context, limit int, _ uint64) ([]*store.PushRecord, error) {
	return p[:min(limit, len(p))], nil
}

// The alert opens when the shop is open and nothing came for the time
// given — counted from the opening when the last push is older — and not
// at night, on a closed day, for a push sync learned, or when switched off.
func TestQuiet(t *testing.T) {
	hours, err := ParseHours("mon-fri 08:00-20:00")
	if err != nil {
		t.Fatal(err)
	}
	wed := func(hh, mm int) time.Time { return time.Date(2026, 11, 25, hh, mm, 0, 0, time.UTC) } // a Wednesday
	push := func(at time.Time) *store.PushRecord { return &store.PushRecord{ReceivedAt: at} }
	synced := &store.PushRecord{ReceivedAt: wed(11, 50), RemoteAddr: store.ProvenanceSync}
	for _, tc := range []struct {
		name   string
		pushes pushList
		now    time.Time
		after  time.Duration
		since  time.Time // zero: no alert
	}{
		{"recent push", pushList{push(wed(11, 40))}, wed(12, 0), 30 * time.Minute, time.Time{}},
		{"quiet since the last push", pushList{push(wed(11, 0))}, wed(12, 0), 30 * time.Minute, wed(11, 0)},
		{"sync learned is not received", pushList{synced, push(wed(11, 0))}, wed(12, 0), 30 * time.Minute, wed(11, 0)},
		{"last push yesterday: counted from opening", pushList{push(wed(-4, 0))}, wed(8, 20), 30 * time.Minute, time.Time{}},
		{"last push yesterday, long after opening", pushList{push(wed(-4, 0))}, wed(9, 0), 30 * time.Minute, wed(8, 0)},
		{"never a push", nil, wed(9, 0), 30 * time.Minute, wed(8, 0)},
		{"at night", pushList{push(wed(11, 0))}, wed(21, 0), 30 * time.Minute, time.Time{}},
		{"on a closed day", pushList{push(wed(11, 0))}, wed(12, 0).AddDate(0, 0, 3), 30 * time.Minute, time.Time{}},
		{"switched off", nil, wed(12, 0), 0, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Quiet(t.Context(), tc.pushes, tc.now, tc.after, hours)
			if err != nil {
				t.Fatal(err)
			}
			if tc.since.IsZero() {
				if a != nil {
					t.Fatalf("alert %+v, want none", a)
				}
				return
			}
			if a == nil || !a.Since.Equal(tc.since) || a.Kind != "quiet" || !strings.Contains(a.Text, "nothing received for "+minutes(tc.now.Sub(tc.since))+" ") {
				t.Fatalf("alert %+v, want one since %s", a, tc.since)
			}
			// The same silence keeps its ID a minute later, so it is sent once.
			b, _ := Quiet(t.Context(), tc.pushes, tc.now.Add(time.Minute), tc.after, hours)
			if b == nil || b.ID != a.ID {
				t.Fatalf("a minute later: %+v, want the same ID %s", b, a.ID)
			}
		})
	}
}

func TestMinutes(t *testing.T) {
	for d, want := range map[time.Duration]string{time.Minute + 47*time.Second: "1m", 59 * time.Minute: "59m", 2*time.Hour + 5*time.Minute: "2h05m"} {
		if got := minutes(d); got != want {
			t.Errorf("minutes(%s) = %q, want %q", d, got, want)
		}
	}
}
