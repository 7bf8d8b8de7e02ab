package pushload

import (
	"io"
	"net/http"

	bolt "go.etcd.io/bbolt"

	"paydesk/api"
)

// NoopHandler reads each request's body and answers 200: what net/http
// alone does per request on this machine, the ceiling any listener behind
// it can reach.
func NoopHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	})
}

// PlainReceiver is a push receiver written the obvious way, the baseline
// paydesk's listener is held against: net/http, the signature checked,
// the push decoded, its body stored under its key with bbolt's DB.Batch
// (which shares commits and fsyncs between concurrent callers), then 200.
// It keeps no indexes, no log, no ledger: what it does less than the
// listener, it does for free.
func PlainReceiver(db *bolt.DB, v api.Verifier) (http.Handler, error) {
	err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists([]byte("pushes"))
		return err
	})
	if err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		if _, err := v.Verify(r.Header.Get("Authorization"), r.Method, r.Host+r.URL.RequestURI(), body); err != nil {
			http.Error(w, "access denied", http.StatusUnauthorized)
			return
		}
		p, err := api.DecodePush(body)
		if err != nil {
			http.Error(w, "bad push", http.StatusBadRequest)
			return
		}
		key := []byte(p.Key())
		err = db.Batch(func(tx *bolt.Tx) error { return tx.Bucket([]byte("pushes")).Put(key, body) })
		if err != nil {
			http.Error(w, "not stored", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}), nil
}
