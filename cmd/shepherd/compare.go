package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/shepherd-db/shepherd/internal/admin"
	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/driver"
)

// compareCmd is "shepherd check" and "shepherd repair": it asks the
// running shepherd the config describes, through its admin console, to
// compare (and repair) the replicas, prints one line per difference and
// exits 1 when differences remain, 0 when none, 2 when it could not ask.
func compareCmd(name string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "configuration file of the running shepherd; none: the embedded default")
	table := fs.String("table", "", "compare only this table")
	user := fs.String("user", "", "user to log in as (default: the config's first admin user, else shepherd)")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		if fs.NArg() > 0 {
			fmt.Fprintf(stderr, "%s: unexpected argument %q\n", name, fs.Arg(0))
		}
		return 2
	}
	cfg := config.Embedded()
	if *cfgPath != "" {
		c, err := config.Load(*cfgPath, driver.Names())
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		cfg = c
	}
	login := admin.Login{Addr: cfg.Listen, User: "shepherd"}
	if len(cfg.Users) > 0 {
		// The admin console lets in the users marked admin only.
		u := cfg.Users[0]
		for _, a := range cfg.Users {
			if a.Admin {
				u = a
				break
			}
		}
		login.User, login.Password = u.Name, u.Password
	}
	if *user != "" {
		login.User, login.Password = *user, ""
		for _, u := range cfg.Users {
			if u.Name == *user {
				login.Password = u.Password
			}
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	repair := name == "repair"
	cols, rows, err := admin.Compare(ctx, login, repair, *table)
	if err != nil {
		fmt.Fprintf(stderr, "shepherd %s: %v\n", name, err)
		return 2
	}
	fmt.Fprintln(stdout, strings.Join(cols, "\t"))
	remaining := 0
	for _, r := range rows {
		fmt.Fprintln(stdout, strings.Join(r, "\t"))
		if !repair || r[len(r)-1] != "repaired" {
			remaining++
		}
	}
	switch {
	case len(rows) == 0:
		fmt.Fprintln(stderr, "the replicas agree")
		return 0
	case remaining == 0:
		fmt.Fprintf(stderr, "%d differences, all repaired\n", len(rows))
		return 0
	}
	fmt.Fprintf(stderr, "%d differences remain\n", remaining)
	return 1
}
