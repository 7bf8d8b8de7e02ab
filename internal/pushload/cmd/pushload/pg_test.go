package main

import "testing"

func TestDatabaseURL(t *testing.T) {
	for _, tc := range []struct {
		url, db, want string
		ok            bool
	}{
		{"postgres://postgres@127.0.0.1:5432/cmp?sslmode=disable", "cmp", "postgres://postgres@127.0.0.1:5432/cmp_old?sslmode=disable", true},
		{"postgres://u:p@db.example.test/cmp", "cmp", "postgres://u:p@db.example.test/cmp_old", true},
		{"postgres://cmp@127.0.0.1/cmp", "cmp", "postgres://cmp@127.0.0.1/cmp_old", true}, // the user's name is not the database
		{"postgres://127.0.0.1/cmpx", "cmp", "", false},
		{"postgres://127.0.0.1?dbname=cmp", "cmp", "", false}, // not in the path
		{"host=127.0.0.1 dbname=cmp", "cmp", "", false},
	} {
		got, err := databaseURL(tc.url, tc.db, tc.db+"_old")
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("databaseURL(%q) = %q, %v; want %q (ok %v)", tc.url, got, err, tc.want, tc.ok)
		}
	}
}
