package storetest

import (
	"context"
	"fmt"
	"math/rand"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store"
)

var (
	firstNames = []string{"Anna", "Bram", "Chantal", "Daan", "Eva", "Femke", "Gijs", "Hanna", "Jonas", "Lena", "Lukas", "Marie", "Noah", "Sophie", "Tim", "Zoë"}
	lastNames  = []string{"de Vries", "Jansen", "Bakker", "Visser", "Smit", "Müller", "Schmidt", "Schneider", "Fischer", "Weber", "Gruber", "Huber", "Wagner", "Mayer"}
	countries  = []string{"NL", "NL", "NL", "DE", "DE", "AT"}
	products   = []struct {
		title string
		price string
	}{
		{"T-shirt organic cotton", "19.99"}, {"Running shoes", "89.95"}, {"Rain jacket", "129.00"}, {"Wool socks 3-pack", "14.50"},
		{"Backpack 25 l", "64.95"}, {"Water bottle", "12.99"}, {"Cap", "17.49"}, {"Hoodie", "49.95"}, {"Sunglasses", "39.00"},
	}
)

// Generate writes n reservations with 1–5 article lines each into db, with
// their captures, spread over every state and over the last 20 days of the
// db's clock. The same seed and clock give the same data. It writes in
// large transactions; open db with NoSync for speed. It runs to the end
// (context.Background()): a generator for tests and measurements.
func Generate(db *store.DB, n int, seed int64) error {
	rng := rand.New(rand.NewSource(seed))
	now := db.Now()
	const chunk = 5000
	for start := 0; start < n; start += chunk {
		end := min(n, start+chunk)
		rs := make([]*store.Reservation, 0, end-start)
		var txs []*store.Transaction
		for i := start; i < end; i++ {
			r, t := reservation(rng, i, func(d time.Duration) time.Time { return now.Add(-d) })
			rs = append(rs, r)
			txs = append(txs, t...)
		}
		if err := db.PutReservations(context.Background(), rs); err != nil {
			return fmt.Errorf("generate reservations: %w", err)
		}
		if err := db.PutTransactions(context.Background(), txs); err != nil {
			return fmt.Errorf("generate captures: %w", err)
		}
	}
	return nil
}

// span is the time the generated reservations were created in, up to the
// db's clock.
const span = 20 * 24 * time.Hour

func key(rng *rand.Rand) string { return fmt.Sprintf("%016X%016X", rng.Uint64(), rng.Uint64()) }

// reservation makes the i-th reservation and its captures; createdAt turns
// a random duration within span into its creation time.
func reservation(rng *rand.Rand, i int, createdAt func(time.Duration) time.Time) (*store.Reservation, []*store.Transaction) {
	first, last := firstNames[rng.Intn(len(firstNames))], lastNames[rng.Intn(len(lastNames))]
	country := countries[rng.Intn(len(countries))]
	created := createdAt(time.Duration(rng.Int63n(int64(span)))).Truncate(time.Second)
	billing := api.Address{FirstName: first, LastName: last, Street: "Hoofdstraat", HouseNumber: fmt.Sprint(1 + rng.Intn(200)),
		PostalCode: fmt.Sprintf("%04d", 1000+rng.Intn(8999)), City: "Utrecht", Country: country,
		Email: fmt.Sprintf("customer%d@example.com", i), PhoneNumber: "0301234567"}
	var articles []api.Article
	for l, nLines := 0, 1+rng.Intn(5); l < nLines; l++ {
		p := products[rng.Intn(len(products))]
		articles = append(articles, api.Article{Number: fmt.Sprintf("SKU-%03d", l+1+10*rng.Intn(50)), Title: p.title,
			Type: api.ArticleTypeGeneral, Price: decimal.RequireFromString(p.price), Quantity: 1 + rng.Intn(3), Vat: decimal.NewFromInt(21)})
	}
	if rng.Intn(4) == 0 {
		articles = append(articles, api.Article{Number: "SHIP", Title: "Shipping", Type: api.ArticleTypeShipment, Price: decimal.RequireFromString("4.95"), Quantity: 1, Vat: decimal.NewFromInt(21)})
	}
	if rng.Intn(10) == 0 {
		articles = append(articles, api.Article{Number: "DISC", Title: "Discount", Type: api.ArticleTypeGeneral, Price: decimal.RequireFromString("-5.00"), Quantity: 1, Vat: decimal.NewFromInt(21)})
	}
	r := &store.Reservation{Key: key(rng), ReservationNumber: fmt.Sprintf("R%09d", 100000000+i), Invoice: fmt.Sprintf("ORD-%07d", i+1),
		Currency: "EUR", IsTest: true, Original: store.Update{Articles: articles, Billing: billing}, LinesKnown: true,
		Created: created, Status: store.Status{Code: api.StatusSuccess, Time: created.Add(2 * time.Minute)}}
	r.Requests = []store.Request{{Key: r.Key, Action: api.ActionReserve, Status: r.Status}}
	roll := rng.Intn(100)
	switch {
	case roll < 5: // awaiting the customer
		r.Status = store.Status{Code: api.StatusPendingProcessing, SubCode: api.SubCodeRedirect, Time: created}
		r.ReservationNumber = ""
		r.Requests[0].Status = r.Status
		return r, nil
	case roll < 8:
		r.Status = store.Status{Code: api.StatusRejected, Time: created}
		r.ReservationNumber = ""
		r.Requests[0].Status = r.Status
		return r, nil
	case roll < 55: // reserved
		return r, nil
	}
	var txs []*store.Transaction
	capture := func(lines []api.CaptureLine, amount decimal.Decimal, at time.Time) {
		k := key(rng)
		txs = append(txs, &store.Transaction{Key: k, Kind: store.KindCapture, TransactionType: api.TypeDeferredPay,
			ServiceCode: api.ServiceDeferred, Invoice: r.Invoice, Currency: "EUR", Amount: amount, IsTest: true,
			Status: store.Status{Code: api.StatusSuccess, SubCode: api.SubCodeProcessed, Time: at}, ReservationKey: r.Key,
			ReservationNumber: r.ReservationNumber, InvoiceNumber: "INV-" + k[:10], Lines: lines, FullCapture: len(lines) == 0, Created: at})
	}
	at := created.Add(time.Duration(1+rng.Intn(72)) * time.Hour)
	switch {
	case roll < 75: // captured in full
		capture(nil, api.ArticlesTotal(articles), at)
	case roll < 90: // the first article shipped
		a := articles[0]
		capture([]api.CaptureLine{{ArticleNumber: a.Number, Quantity: a.Quantity}}, a.Total(), at)
		if roll >= 85 { // and the rest cancelled
			ck := key(rng)
			r.Requests = append(r.Requests, store.Request{Key: ck, Action: api.ActionCancelReservation,
				Status: store.Status{Code: api.StatusSuccess, SubCode: api.SubCodeProcessed, Time: at.Add(time.Hour)}})
		}
	default: // cancelled
		ck := key(rng)
		r.Requests = append(r.Requests, store.Request{Key: ck, Action: api.ActionCancelReservation,
			Status: store.Status{Code: api.StatusSuccess, SubCode: api.SubCodeProcessed, Time: at}})
	}
	return r, txs
}
