package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	gossh "golang.org/x/crypto/ssh"

	"paydesk/internal/access"
	"paydesk/store"
)

// userCmd manages the people who reach paydesk over SSH (paydesk serve
// --ssh): kept in the store, so several paydesk serve on one PostgreSQL
// know the same users.
func userCmd(sio IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "user",
		Short: "The users who reach paydesk serve over SSH: add, list, role, remove",
		Long: `Users reach paydesk serve --ssh with their public key: ssh -p PORT NAME@host opens
the console as NAME, ssh -p PORT NAME@host COMMAND runs the command. A user's role says what
they may do. Removing a user, or changing their role, ends their open sessions at once. Every
change is in the audit log with who made it. See docs/team.md.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(userAddCmd(sio), userListCmd(sio), userRoleCmd(sio), userRemoveCmd(sio))
	return cmd
}

func userAddCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "user add", sio: sio}
	var keyFile, role string
	cmd := c.command("add NAME --key FILE --role ROLE", "Add a user with their SSH public key and role", cobra.ExactArgs(1),
		func(ctx context.Context, c *cmdContext) int { return runUserAdd(ctx, c, keyFile, role) })
	addFlags(cmd.Flags(), "db")
	cmd.Flags().StringVar(&keyFile, "key", "", "the user's public key file (id_ed25519.pub; one authorized_keys line; - reads stdin)")
	cmd.Flags().StringVar(&role, "role", "", "the user's role: "+roleNames())
	return cmd
}

func userListCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "user list", sio: sio}
	cmd := c.command("list", "List the users, their roles and keys", cobra.NoArgs, runUserList)
	c.lookFlags()
	return cmd
}

func userRoleCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "user role", sio: sio}
	cmd := c.command("role NAME ROLE", "Give a user another role: their open sessions end at once", cobra.ExactArgs(2), runUserRole)
	addFlags(cmd.Flags(), "db")
	return cmd
}

func userRemoveCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "user remove", sio: sio}
	cmd := c.command("remove NAME", "Remove a user: their open sessions end at once", cobra.ExactArgs(1), runUserRemove)
	addFlags(cmd.Flags(), "db")
	return cmd
}

func roleNames() string {
	var names []string
	for _, r := range access.Roles() {
		names = append(names, string(r))
	}
	return strings.Join(names, ", ")
}

// mayManageUsers: over SSH only an admin manages users; on this machine
// whoever may open the cache may.
func mayManageUsers(ctx context.Context, c *cmdContext) bool {
	p, ok := access.From(ctx)
	if !ok || p.Via != access.SSH || p.Role == access.Admin {
		return true
	}
	fmt.Fprintf(c.sio.Stderr, "paydesk %s: %s is %s; managing users takes the role admin\n", c.name, clean(p.User), p.Role)
	return false
}

// readPublicKey reads one public key (authorized_keys form) from file.
func readPublicKey(file string) (gossh.PublicKey, error) {
	if file == "" {
		return nil, errors.New("--key: name the user's public key file (id_ed25519.pub)")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--key %s: %w", file, err)
	}
	if len(b) > 64<<10 {
		return nil, fmt.Errorf("--key %s: %d bytes; a public key is one short line", file, len(b))
	}
	key, err := parsePublicKey(b)
	if err != nil {
		return nil, fmt.Errorf("--key %s: %w", file, err)
	}
	return key, nil
}

// readPublicKeyFrom reads one public key (authorized_keys form) from r.
func readPublicKeyFrom(what string, r io.Reader) (gossh.PublicKey, error) {
	if r == nil {
		return nil, fmt.Errorf("%s: no stdin to read the key from", what)
	}
	b, err := io.ReadAll(io.LimitReader(r, 64<<10+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if len(b) > 64<<10 {
		return nil, fmt.Errorf("%s: more than 64 KiB; a public key is one short line", what)
	}
	key, err := parsePublicKey(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return key, nil
}

// parsePublicKey reads exactly one public key in authorized_keys form.
func parsePublicKey(b []byte) (gossh.PublicKey, error) {
	key, _, _, rest, err := gossh.ParseAuthorizedKey(b)
	if err != nil {
		return nil, fmt.Errorf("not a public key (one authorized_keys line, e.g. id_ed25519.pub): %w", err)
	}
	if strings.TrimSpace(string(rest)) != "" {
		return nil, errors.New("holds more than one key; give the user's one key")
	}
	return key, nil
}

// usersCache opens the cache for the user commands: made when missing
// (users may be added before anything else).
func (c *cmdContext) usersCache(ctx context.Context) (*store.DB, int) {
	set, err := c.settings()
	if err != nil {
		return nil, c.fail(err)
	}
	c.set = set
	if h := c.sio.host; h != nil {
		db, err := h.cacheFor(set)
		if err != nil {
			return nil, c.fail(err)
		}
		return db, -1
	}
	return c.openStore(ctx, set, store.Options{LockTimeout: 500 * time.Millisecond}, func(err error) error {
		return lockedError(err, set, getenvOf(c.sio))
	})
}

func runUserAdd(ctx context.Context, c *cmdContext, keyFile, roleName string) int {
	if !mayManageUsers(ctx, c) {
		return exitFailed
	}
	role, err := access.ParseRole(roleName)
	if err != nil {
		return c.usage("--role: %v", err)
	}
	var key gossh.PublicKey
	if keyFile == "-" {
		// Over SSH the key comes on stdin: ssh … user add bob --key - < bob.pub
		key, err = readPublicKeyFrom("--key -", c.sio.Stdin)
	} else {
		var path string
		if path, err = c.inputFile(ctx, "--key", keyFile); err == nil {
			key, err = readPublicKey(path)
		}
	}
	if err != nil {
		return c.usage("%v", clean(err.Error()))
	}
	db, code := c.usersCache(ctx)
	if db == nil {
		return code
	}
	defer c.closeCache(db)
	by := changedBy(ctx, c)
	u := store.User{Name: c.args[0], Role: string(role), Key: strings.TrimSpace(string(gossh.MarshalAuthorizedKey(key))),
		Fingerprint: gossh.FingerprintSHA256(key), Added: c.now(db), AddedBy: by}
	if err := db.AddUser(ctx, u); err != nil {
		return c.fail(err)
	}
	fmt.Fprintf(c.sio.Stdout, "user %s added: %s, key %s\n", u.Name, u.Role, u.Fingerprint)
	return exitOK
}

func runUserList(ctx context.Context, c *cmdContext) int {
	db, code := c.usersCache(ctx)
	if db == nil {
		return code
	}
	defer c.closeCache(db)
	us, err := db.Users(ctx)
	if err != nil {
		return c.fail(err)
	}
	if c.flags.json {
		if us == nil {
			us = []store.User{}
		}
		_ = writeJSON(c.sio.Stdout, us)
		return exitOK
	}
	if len(us) == 0 {
		fmt.Fprintln(c.sio.Stdout, "no users: paydesk user add NAME --key FILE --role ROLE")
		return exitOK
	}
	tw := tabwriter.NewWriter(c.sio.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "USER\tROLE\tKEY\tADDED\tBY")
	for _, u := range us {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", clean(u.Name), clean(u.Role), clean(u.Fingerprint), u.Added.UTC().Format("2006-01-02 15:04"), clean(u.AddedBy))
	}
	_ = tw.Flush()
	return exitOK
}

func runUserRemove(ctx context.Context, c *cmdContext) int {
	if !mayManageUsers(ctx, c) {
		return exitFailed
	}
	db, code := c.usersCache(ctx)
	if db == nil {
		return code
	}
	defer c.closeCache(db)
	if err := db.RemoveUser(ctx, c.args[0], changedBy(ctx, c)); err != nil {
		return c.fail(err)
	}
	recheckSessions(c)
	fmt.Fprintf(c.sio.Stdout, "user %s removed\n", clean(c.args[0]))
	return exitOK
}

func runUserRole(ctx context.Context, c *cmdContext) int {
	if !mayManageUsers(ctx, c) {
		return exitFailed
	}
	role, err := access.ParseRole(c.args[1])
	if err != nil {
		return c.usage("ROLE: %v", err)
	}
	db, code := c.usersCache(ctx)
	if db == nil {
		return code
	}
	defer c.closeCache(db)
	changed, err := db.SetUserRole(ctx, c.args[0], string(role), changedBy(ctx, c))
	if err != nil {
		return c.fail(err)
	}
	if !changed {
		fmt.Fprintf(c.sio.Stdout, "user %s is %s already\n", clean(c.args[0]), role)
		return exitOK
	}
	recheckSessions(c)
	fmt.Fprintf(c.sio.Stdout, "user %s is now %s\n", clean(c.args[0]), role)
	return exitOK
}

// changedBy names who changes the users, for the audit log: the
// principal (over SSH with the key's fingerprint), else the OS user.
func changedBy(ctx context.Context, c *cmdContext) string {
	if p, ok := access.From(ctx); ok {
		return p.String()
	}
	return operatorName(getenvOf(c.sio))
}

// recheckSessions: the SSH server of this process ends the changed
// user's sessions now; other servers on the same database within their
// recheck interval.
func recheckSessions(c *cmdContext) {
	if h := c.sio.host; h != nil && h.sshd != nil {
		h.sshd.Recheck()
	}
}
