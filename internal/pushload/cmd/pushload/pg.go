package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"paydesk/internal/pushload"
)

// pgRound is what a PostgreSQL target's round cost the server: its WAL and
// its CPU during the ingest, and until the inbox was applied.
type pgRound struct {
	walIngest, walAll int64
	cpuIngest, cpuAll time.Duration
}

// pgServer is the PostgreSQL server a target writes to, as pushload sees
// it from outside: its WAL position, and its processes' CPU when the
// server runs on this machine and its data directory is readable.
type pgServer struct {
	url string
	pm  int // the postmaster's process ID; 0 when not known
}

func newPGServer(ctx context.Context, url string) (*pgServer, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	s := &pgServer{url: url}
	var dir string
	if err := conn.QueryRow(ctx, "SHOW data_directory").Scan(&dir); err == nil {
		s.pm = pushload.Postmaster(dir)
	}
	return s, nil
}

// wal is the server's WAL position in bytes.
func (s *pgServer) wal(ctx context.Context) (int64, error) {
	conn, err := pgx.Connect(ctx, s.url)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var n int64
	err = conn.QueryRow(ctx, "SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint").Scan(&n)
	return n, err
}

// cpu is the CPU the server's processes used so far (0 when the server
// is not on this machine).
func (s *pgServer) cpu() time.Duration { return pushload.ServerCPU(s.pm) }

// freshDatabase creates the database name on the server url names and
// returns its URL.
func freshDatabase(ctx context.Context, url, name string) (string, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return "", err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	other, err := databaseURL(url, cfg.Database, name)
	if err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("create database %s (for -pg-old; drop it first if it is left from a run before): %w", name, err)
	}
	return other, nil
}

// databaseURL is url, which names database db, naming database name
// instead: the database is the URL's path, after the host and before the
// query.
func databaseURL(url, db, name string) (string, error) {
	scheme, rest, ok := strings.Cut(url, "://")
	host, path, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || db == "" || !strings.HasPrefix(path, db) || (len(path) > len(db) && path[len(db)] != '?') {
		return "", fmt.Errorf("-pg %s: a URL postgres://HOST/DATABASE is needed for -pg-old", url)
	}
	return scheme + "://" + host + "/" + name + path[len(db):], nil
}

// awaitInbox waits until the push inbox of the database url names has no
// push waiting to be applied, so that an applier still at work does not
// take the next target's CPU, and returns how long that took (false when
// not within ten minutes).
func awaitInbox(ctx context.Context, url string) (time.Duration, bool) {
	start := time.Now()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0, false
	}
	defer conn.Close(ctx)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for time.Since(start) < 10*time.Minute {
		var waiting bool
		err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM paydesk_push_inbox WHERE push_id IS NULL)").Scan(&waiting)
		if err != nil {
			return time.Since(start), false
		}
		if !waiting {
			return time.Since(start), true
		}
		select {
		case <-ctx.Done():
			return time.Since(start), false
		case <-tick.C:
		}
	}
	return time.Since(start), false
}
