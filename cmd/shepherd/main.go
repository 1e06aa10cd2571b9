// Command shepherd serves one PostgreSQL-compatible database backed by
// several replica databases that vote on every answer.
//
//	shepherd serve [--config FILE] [--listen ADDR] [--data-dir DIR]
//	shepherd check-config FILE
//	shepherd check [--config FILE] [--table T]
//	shepherd repair [--config FILE] [--table T]
//	shepherd version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/driver"
	_ "github.com/shepherd-db/shepherd/internal/driver/all"
	"github.com/shepherd-db/shepherd/internal/server"
)

const version = "0.1.0-dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage:
  shepherd serve [--config FILE] [--listen ADDR] [--data-dir DIR]
        serve clients; without --config, three embedded SQLite replicas
  shepherd check-config FILE
        check a configuration file and exit
  shepherd check [--config FILE] [--table T] [--user U]
        ask the running shepherd to compare its replicas: one line per
        differing row (replica, table, key); exit 1 if any
  shepherd repair [--config FILE] [--table T] [--user U]
        as check, and rewrite the rows f+1 replicas agree on to the others;
        exit 1 if differences remain
  shepherd version
`)
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "serve":
		return serve(args[1:], stdout, stderr)
	case "check-config":
		if len(args) != 2 {
			usage(stderr)
			return 2
		}
		cfg, err := config.Load(args[1], driver.Names())
		if err == nil {
			err = server.Check(cfg)
		}
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		fmt.Fprintln(stdout, "config ok")
		return 0
	case "bench":
		// The benchmark is a command of its own, so that the server does
		// not link it (nor its plotting stack).
		fmt.Fprintf(stderr, "shepherd: the benchmark is a command of its own: %s (see BENCHMARKS.md)\n",
			strings.Join(append([]string{"go run ./cmd/shepherd-bench"}, args[1:]...), " "))
		return 2
	case "check", "repair":
		return compareCmd(args[0], args[1:], stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "shepherd", version)
		return 0
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "shepherd: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func serve(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "configuration file (TOML); none: the embedded default")
	listen := fs.String("listen", "", "address to listen on (overrides the config's listen)")
	dataDir := fs.String("data-dir", "", "data directory (overrides the config's data_dir)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var cfg *config.Config
	if *cfgPath == "" {
		cfg = config.Embedded()
	} else {
		c, err := config.Load(*cfgPath, driver.Names())
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		cfg = c
	}
	if *listen != "" {
		cfg.Listen = *listen
	}
	if *dataDir != "" {
		cfg.DataDir = *dataDir
	}
	if err := cfg.Check(driver.Names()); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	logging := server.NewLogging(stderr, cfg)
	log := logging.Logger
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := server.Open(ctx, cfg, log)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	srv.SetLogging(logging)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				reload(srv, *cfgPath, *listen, *dataDir, log)
			}
		}
	}()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		fmt.Fprintln(stderr, &config.Error{Field: "listen", Msg: err.Error()})
		return 1
	}
	var names []string
	for _, r := range cfg.Replicas {
		names = append(names, r.Name+" ("+r.Driver+")")
	}
	what := "configuration " + *cfgPath
	if *cfgPath == "" {
		what = "embedded default: three SQLite replicas under " + cfg.DataDir + ", any user by trust on loopback"
	}
	fmt.Fprintf(stdout, "shepherd %s listening on %s, mode %s, f=%d, replicas %s (%s)\n",
		version, ln.Addr(), cfg.Mode, cfg.F, strings.Join(names, ", "), what)
	if addr := srv.MetricsAddr(); addr != "" {
		log.Info("metrics endpoint listening", "addr", "http://"+addr+"/metrics")
	}
	if err := srv.Serve(ctx, ln); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "shepherd:", err)
		return 1
	}
	return 0
}

// reload reads the configuration file again (SIGHUP) and applies what may
// change while shepherd runs (server.Reload); the command line's
// overrides stay. A file that does not load, or changes a key that needs
// a restart, is logged with the key at fault, and the configuration in
// force is kept.
func reload(srv *server.Server, path, listen, dataDir string, log *slog.Logger) {
	if path == "" {
		log.Warn("SIGHUP: no configuration file to reload (serving the embedded default)")
		return
	}
	cfg, err := config.Load(path, driver.Names())
	if err == nil {
		if listen != "" {
			cfg.Listen = listen
		}
		if dataDir != "" {
			cfg.DataDir = dataDir
		}
		err = cfg.Check(driver.Names())
	}
	if err != nil {
		srv.ReloadFailed()
	} else {
		err = srv.Reload(cfg)
	}
	if err != nil {
		key := ""
		var ce *config.Error
		if errors.As(err, &ce) {
			key = ce.Field
		}
		log.Error("configuration reload refused: the configuration in force is kept", "file", path, "key", key, "err", err)
		return
	}
}
