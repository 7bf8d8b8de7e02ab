package batch

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// issue 24: the same manifest row twice (same reservation, article, parcel
// and tracking) is refused naming both lines, not summed into one capture
// of two units; the same article in two parcels is two units.
func TestPreflightRepeatedRowRefused(t *testing.T) {
	lookup := lookupOf(testReservation("SHOP-1", "RES-1"), testReservation("SHOP-2", "RES-2"))
	m := manifest(t, "invoice,article,quantity,parcel,tracking\n"+
		"SHOP-1,MUG,1,P1,T1\nSHOP-1,MUG,1,P1,T1\n"+ // repeated
		"SHOP-2,MUG,1,P1,T1\nRES-2,MUG,1,P2,T2\n") // two parcels, one reservation named two ways
	pf := PlanCapture(m, One(lookup), testNow, false)
	if len(pf.Items) != 1 || pf.Items[0].Invoice != "SHOP-2" || linesText(pf.Items[0].Lines) != "MUG=2" {
		t.Fatalf("items %+v", pf.Items)
	}
	if len(pf.Refused) != 1 || pf.Refused[0].Rule != RuleRepeatedRow || pf.Refused[0].Line != 3 ||
		!strings.Contains(pf.Refused[0].Message, "line 3 repeats line 2") || pf.RefusedReservations != 1 || pf.RefusedRows != 2 {
		t.Fatalf("refused %+v (%d reservations, %d rows)", pf.Refused, pf.RefusedReservations, pf.RefusedRows)
	}
}

// genReader streams a generated manifest: the test never holds it.
type genReader struct {
	head string
	rows int
	row  func(i int) string
	i    int
	buf  []byte
}

func (g *genReader) Read(p []byte) (int, error) {
	for len(g.buf) < len(p) {
		switch {
		case g.head != "":
			g.buf, g.head = append(g.buf, g.head...), ""
		case g.i < g.rows:
			g.buf = append(g.buf, g.row(g.i)...)
			g.i++
		default:
			if len(g.buf) == 0 {
				return 0, io.EOF
			}
			n := copy(p, g.buf)
			g.buf = g.buf[n:]
			return n, nil
		}
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

// A manifest over a limit is refused whole, naming the limit, and read no
// further; one within them is hashed over all its bytes as before.
func TestReadManifestLimits(t *testing.T) {
	row := func(i int) string { return fmt.Sprintf("SHOP-%d,MUG,1,P%d,T%d\n", i%1000, i, i) }
	const head = "invoice,article,quantity,parcel,tracking\n"
	_, err := ReadManifest(&genReader{head: head, rows: MaxManifestRows + 1, row: row})
	if err == nil || !strings.Contains(err.Error(), "more than 250000 rows") {
		t.Fatalf("too many rows: %v", err)
	}
	long := head + "SHOP-1,MUG,1,P1,T1\nSHOP-1,\"" + strings.Repeat("x", MaxManifestRowBytes+256<<10) + "\",1,P,T\nSHOP-2,MUG,1,P,T\n"
	if _, err := ReadManifest(strings.NewReader(long)); err == nil || !strings.Contains(err.Error(), "line 3: a row longer than 64 KiB") {
		t.Fatalf("long row: %v", err)
	}
	if _, err := ReadRefs(strings.NewReader("SHOP-1\n" + strings.Repeat("y", MaxManifestRowBytes+256<<10) + "\n")); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("long ref: %v", err)
	}
	in := head + "SHOP-1,MUG,1,P1,T1\nSHOP-1," + strings.Repeat("A", 200) + ",1,P,T\n"
	m, err := ReadManifest(strings.NewReader(in))
	sum := sha256.Sum256([]byte(in))
	if err != nil || m.Hash != hex.EncodeToString(sum[:]) || len(m.Rows) != 2 || !strings.Contains(m.Rows[1].Problem, "article: longer than 128 bytes") ||
		len(m.Rows[1].Article) > 100 {
		t.Fatalf("%+v %v", m, err)
	}
}

// One reservation named on thousands of rows and parcels: every line of
// the pre-flight stays short (the old one printed a line of 68.8 MB).
func TestPreflightLinesBounded(t *testing.T) {
	big := testReservation("SHOP-1", "RES-1")
	big.Lines[0].Reserved = 100_000
	row := func(i int) string { return fmt.Sprintf("SHOP-1,MUG,1,P%d,T%d\n", i, i) }
	m, err := ReadManifest(&genReader{head: "invoice,article,quantity,parcel,tracking\n", rows: 5000, row: row})
	if err != nil {
		t.Fatal(err)
	}
	for _, reserved := range []int{100_000, 10} { // a capture, then an over-capture naming its lines
		big.Lines[0].Reserved = reserved
		pf := PlanCapture(m, One(lookupOf(big)), testNow, false)
		var b strings.Builder
		WritePreflight(&b, pf)
		_ = writeJSONLines(&b, pf)
		for i, l := range strings.Split(b.String(), "\n") {
			if len(l) > 2000 {
				t.Fatalf("reserved %d: line %d is %d bytes: %.200s…", reserved, i+1, len(l), l)
			}
		}
		if len(pf.Items) == 1 && !strings.Contains(pf.Items[0].Note, "and 4980 more") {
			t.Fatalf("note %q", pf.Items[0].Note)
		}
	}
}

func writeJSONLines(w io.Writer, pf *Preflight) error {
	for _, it := range pf.JSON().Items {
		fmt.Fprintln(w, it.Note)
	}
	return nil
}

// A 200 MiB manifest in bounded memory: refused at the row limit, after
// reading no more than that (the old reader held 4.67 GB). Skipped with
// -short: it writes the file.
func TestManifestHugeBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 200 MiB manifest")
	}
	if raceEnabled {
		t.Skip("one goroutine reading 200 MiB: .ci/run runs it without the race detector")
	}
	path := filepath.Join(t.TempDir(), "huge.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("invoice,article,quantity,parcel,tracking\n")
	for i := 0; ; i++ {
		fmt.Fprintf(w, "SHOP-%07d,MUG-BLUE,1,PARCEL-%09d,TRACK-%012d\n", i%100_000, i, i)
		if i%10000 == 0 {
			if st, _ := f.Stat(); st.Size() > 200<<20 {
				break
			}
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, rows := range []int{0, MaxManifestRows} {
		in, _ := os.Open(path)
		var r io.Reader = in
		if rows > 0 { // the largest manifest accepted: all of it is planned
			r = &lineLimit{r: bufio.NewReader(in), lines: rows + 1}
		}
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		m, err := ReadManifest(r)
		var pf *Preflight
		if err == nil {
			pf = PlanCapture(m, One(lookupOf(testReservation("SHOP-0000001", "RES-1"))), testNow, false)
		}
		// What stays live (the rows and the plan); the peak is within the
		// collector's allowance of it (GOGC).
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		in.Close()
		live := after.HeapAlloc
		t.Logf("rows limit %d: err %v; live heap %d MiB, allocated %d MiB in all", rows, err, live>>20, (after.TotalAlloc-before.TotalAlloc)>>20)
		switch {
		case rows == 0 && (err == nil || !strings.Contains(err.Error(), "more than")):
			t.Fatalf("200 MiB manifest: %v", err)
		case rows > 0 && (err != nil || pf.Rows != MaxManifestRows):
			t.Fatalf("manifest at the limit: %v", err)
		}
		if live > 100<<20 {
			t.Fatalf("heap %d MiB", live>>20)
		}
		runtime.KeepAlive(pf)
		runtime.KeepAlive(m)
	}
}

// lineLimit reads the first lines of r.
type lineLimit struct {
	r     *bufio.Reader
	lines int
}

func (l *lineLimit) Read(p []byte) (int, error) {
	if l.lines == 0 {
		return 0, io.EOF
	}
	b, err := l.r.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	if len(b) > len(p) {
		b = b[:len(p)]
	}
	l.lines--
	return copy(p, b), nil
}
