package pushlistener

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// privatePG is a PostgreSQL server of one test's own, made like .ci/pg
// makes the shared one (initdb in a temp dir, as PAYDESK_TEST_PG_USER, on
// a free port on 127.0.0.1 with its socket in the temp dir, PostgreSQL's
// default settings: fsync and synchronous_commit on), so a test may stop
// it hard without taking the other tests' server down. Stopped and
// removed when the test ends.
type privatePG struct {
	bin, dir, data, log, osUser string
	port                        int
	URL                         string // of the database paydesk_test
}

// startPrivatePG needs the variables .ci/pg exports (PAYDESK_TEST_PG_BIN,
// PAYDESK_TEST_PG_USER); it skips without them.
func startPrivatePG(t *testing.T) *privatePG {
	t.Helper()
	bin, osUser := os.Getenv("PAYDESK_TEST_PG_BIN"), os.Getenv("PAYDESK_TEST_PG_USER")
	if os.Getenv("PAYDESK_TEST_PG") == "" || bin == "" || osUser == "" {
		t.Skip("needs PostgreSQL's binaries: run `. .ci/pg` first (it exports PAYDESK_TEST_PG, PAYDESK_TEST_PG_BIN and PAYDESK_TEST_PG_USER)")
	}
	dir, err := os.MkdirTemp("", "paydesk-pgprivate-")
	if err != nil {
		t.Fatal(err)
	}
	s := &privatePG{bin: bin, dir: dir, data: filepath.Join(dir, "data"), log: filepath.Join(dir, "server.log"), osUser: osUser}
	t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(s.data, "postmaster.pid")); err == nil {
			_ = s.pgctl("-m", "fast", "-w", "-t", "60", "stop")
		}
		_ = os.RemoveAll(dir)
	})
	if os.Getuid() == 0 {
		u, err := user.Lookup(osUser)
		if err != nil {
			t.Fatal(err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := s.as(filepath.Join(bin, "initdb"), "-D", s.data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	for try := 0; ; try++ {
		s.port = freePort(t)
		if err := s.start(); err == nil {
			break
		} else if try == 5 {
			t.Fatalf("pg_ctl start: %v\n%s", err, s.tail())
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE DATABASE paydesk_test"); err != nil {
		t.Fatal(err)
	}
	s.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/paydesk_test?sslmode=disable", s.port)
	return s
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// as is a command run as the server's OS user, from its temp dir.
func (s *privatePG) as(name string, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if os.Getuid() == 0 && s.osUser != "root" {
		cmd = exec.Command("runuser", append([]string{"-u", s.osUser, "--", name}, args...)...)
	} else {
		cmd = exec.Command(name, args...)
	}
	cmd.Dir = s.dir
	return cmd
}

func (s *privatePG) pgctl(args ...string) error {
	out, err := s.as(filepath.Join(s.bin, "pg_ctl"), append([]string{"-D", s.data}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl %v: %v: %s", args, err, out)
	}
	return nil
}

// start starts the (stopped) server on its port and waits until it takes
// connections.
func (s *privatePG) start() error {
	return s.pgctl("-l", s.log, "-w", "-t", "60",
		"-o", fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -c unix_socket_directories=%s", s.port, s.dir), "start")
}

// stopImmediate is `pg_ctl stop -m immediate`: every server process quits
// at once, without a checkpoint; the next start recovers from the WAL.
func (s *privatePG) stopImmediate() error {
	return s.pgctl("-m", "immediate", "-w", "-t", "60", "stop")
}

func (s *privatePG) tail() string {
	b, _ := os.ReadFile(s.log)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
