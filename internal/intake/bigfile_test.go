package intake

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The files of issue 24, generated to disk line by line (never held whole)
// and imported through the store, with the peak live heap sampled as the
// records go by. Skipped with -short: they write and read hundreds of MiB.

// peakHeap samples the live heap; every sample calls ReadMemStats, so it
// is called every so many records.
type peakHeap struct{ peak uint64 }

func (p *peakHeap) sample() {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if m.HeapAlloc > p.peak {
		p.peak = m.HeapAlloc
	}
}

func writeFile(t *testing.T, name string, fill func(w *bufio.Writer)) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fill(w)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func importFile(t *testing.T, path string, every int) (Counts, []Outcome, uint64, error) {
	t.Helper()
	db := openDB(t)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	runtime.GC()
	var p peakHeap
	var notImported []Outcome
	i := 0
	n, err := Import(t.Context(), db, filepath.Base(path), "import", f, func(o Outcome) {
		if i++; i%every == 0 {
			p.sample()
		}
		if o.Result != ResultImported && len(notImported) < 10 {
			o.Reason = fmt.Sprintf("%.200s", o.Reason)
			notImported = append(notImported, o)
		}
	})
	p.sample()
	return n, notImported, p.peak, err
}

const heapBound = 96 << 20

// 600 valid NDJSON orders of 512 KiB a line (300 MiB): the old reader cut
// the file at 256 MiB and said "512 imported, 0 refused".
func TestImportLargeNDJSONWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and imports 300 MiB")
	}
	if raceEnabled {
		t.Skip("one goroutine reading hundreds of MiB: .ci/run runs it without the race detector")
	}
	const lines, size = 600, 512 << 10
	path := writeFile(t, "orders.ndjson", func(w *bufio.Writer) {
		for i := range lines {
			env := reserveEnvelope(t, fmt.Sprintf("BIG-%04d", i))
			w.WriteString("{" + strings.Repeat(" ", size-len(env)-1) + env[1:] + "\n")
		}
	})
	n, bad, peak, err := importFile(t, path, 50)
	if err != nil || n != (Counts{Read: lines, Imported: lines}) {
		t.Fatalf("%+v %v; first not imported: %+v", n, err, bad)
	}
	t.Logf("300 MiB NDJSON: peak heap %d MiB", peak>>20)
	if peak > heapBound {
		t.Fatalf("peak heap %d MiB, want under %d MiB", peak>>20, heapBound>>20)
	}
}

// A 1.2-million-row CSV, 1,200 orders of 1,000 lines: the old reader
// stopped at a million rows and stored the order it stopped in with 999 of
// its lines. Every order is whole now.
func TestImportLargeCSVWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and imports 1.2 million rows")
	}
	if raceEnabled {
		t.Skip("one goroutine reading hundreds of MiB: .ci/run runs it without the race detector")
	}
	const orders, lines = 1200, 1000
	path := writeFile(t, "orders.csv", func(w *bufio.Writer) {
		w.WriteString("invoice,article_number,title,quantity,price,vat\n")
		for o := range orders {
			for l := range lines {
				fmt.Fprintf(w, "BIG-%04d,ART-%04d,Article %d,1,1.00,21\n", o, l, l)
			}
		}
	})
	n, bad, peak, err := importFile(t, path, 20)
	if err != nil || n != (Counts{Read: orders, Imported: orders}) {
		t.Fatalf("%+v %v; first not imported: %+v", n, err, bad)
	}
	t.Logf("1.2M-row CSV: peak heap %d MiB", peak>>20)
	if peak > heapBound {
		t.Fatalf("peak heap %d MiB, want under %d MiB", peak>>20, heapBound>>20)
	}
	f, _ := os.Open(path)
	defer f.Close()
	rd, err := NewReader("orders.csv", f)
	if err != nil {
		t.Fatal(err)
	}
	last := Item{}
	for it, err := rd.Next(); err == nil; it, err = rd.Next() {
		last = it
	}
	if last.Invoice != "BIG-1199" || len(last.Order.Articles) != lines || last.Where != "rows 1199002-1200001" {
		t.Fatalf("last order %s %s: %d lines, want %d", last.Invoice, last.Where, len(last.Order.Articles), lines)
	}
}

// One 200 MiB cell: refused loudly, in bounded memory (the old reader
// imported it at 3.39 GB RSS).
func TestImportHugeCellRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 200 MiB cell")
	}
	if raceEnabled {
		t.Skip("one goroutine reading hundreds of MiB: .ci/run runs it without the race detector")
	}
	path := writeFile(t, "cell.csv", func(w *bufio.Writer) {
		w.WriteString("invoice,article_number,title,quantity,price,vat\nOK-0,A,Mug,1,1.00,21\nOK-1,A,Mug,1,1.00,21\nHUGE-1,A,\"")
		chunk := strings.Repeat("x", 1<<20)
		for range 200 {
			w.WriteString(chunk)
		}
		w.WriteString("\",1,1.00,21\nOK-2,A,Mug,1,1.00,21\n")
	})
	n, bad, peak, err := importFile(t, path, 1)
	if err == nil || !strings.Contains(err.Error(), "row 4: longer than") || n != (Counts{Read: 2, Imported: 1, Refused: 1}) ||
		len(bad) != 1 || !strings.Contains(bad[0].Reason, "may belong to this order") {
		t.Fatalf("%+v %v %+v", n, err, bad)
	}
	t.Logf("200 MiB cell: peak heap %d MiB", peak>>20)
	if peak > heapBound {
		t.Fatalf("peak heap %d MiB, want under %d MiB", peak>>20, heapBound>>20)
	}
}
