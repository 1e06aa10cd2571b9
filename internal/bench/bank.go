package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/jackc/pgx/v5"
)

// BankConfig configures the bank workload: transfers between accounts,
// in the style of ShadowDB's micro-benchmark, with a hot spot and a share
// of read-only balance inquiries.
type BankConfig struct {
	// Accounts is the number of accounts (at least 2).
	Accounts int
	// HotAccounts is the size of the hot spot: accounts 1..HotAccounts
	// (default 10, at most Accounts).
	HotAccounts int
	// HotShare is the probability (0 to 1) that an account a transaction
	// touches is drawn from the hot spot rather than from all accounts.
	HotShare float64
	// ReadOnly is the share (0 to 1) of transactions that are balance
	// inquiries (read-only) rather than transfers.
	ReadOnly float64
	// Initial is every account's starting balance (default 1000).
	Initial int64
	// DeclareReadOnly starts inquiries with BEGIN READ ONLY rather than
	// a plain BEGIN. Off by default: in cbs and ss, shepherd's COMMIT
	// writes into each replica's shepherd_log table inside the
	// transaction, which MariaDB and PostgreSQL refuse in a read-only one
	// (25006), and the replicas are then taken out.
	DeclareReadOnly bool
}

// Bank kinds.
const (
	KindTransfer = "transfer"
	KindInquiry  = "inquiry"
)

// Validate reports a configuration the workload cannot run with.
func (c BankConfig) Validate() error {
	switch {
	case c.Accounts < 2:
		return errors.New("bank: at least 2 accounts")
	case c.HotAccounts < 0 || c.HotAccounts > c.Accounts:
		return fmt.Errorf("bank: hot accounts must be 0..%d", c.Accounts)
	case c.HotShare < 0 || c.HotShare > 1:
		return errors.New("bank: hot share must be between 0 and 1")
	case c.HotShare > 0 && c.HotAccounts < 2:
		return errors.New("bank: a hot spot needs at least 2 accounts")
	case c.ReadOnly < 0 || c.ReadOnly > 1:
		return errors.New("bank: read-only share must be between 0 and 1")
	case c.Initial < 0:
		return errors.New("bank: negative initial balance")
	}
	return nil
}

func (c BankConfig) withDefaults() BankConfig {
	if c.HotAccounts == 0 {
		c.HotAccounts = min(10, c.Accounts)
	}
	if c.Initial == 0 {
		c.Initial = 1000
	}
	return c
}

// Bank is the bank workload.
type Bank struct{ cfg BankConfig }

// NewBank returns the bank workload for cfg.
func NewBank(cfg BankConfig) (*Bank, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Bank{cfg: cfg}, nil
}

// Config returns the configuration with its defaults filled in.
func (b *Bank) Config() BankConfig { return b.cfg }

// Name implements Workload.
func (b *Bank) Name() string { return "bank" }

// Kinds implements Workload.
func (b *Bank) Kinds() []string { return []string{KindTransfer, KindInquiry} }

// bankLoadBatch is the number of accounts one INSERT carries.
const bankLoadBatch = 500

// Load implements Workload: the table bench_account (id, balance), every
// account at the initial balance.
func (b *Bank) Load(ctx context.Context, c Conn) error {
	for _, stmt := range []string{
		"DROP TABLE IF EXISTS bench_account",
		"CREATE TABLE bench_account (id integer PRIMARY KEY, balance bigint NOT NULL)",
	} {
		if _, err := c.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("bank: %s: %w", stmt, err)
		}
	}
	for from := 1; from <= b.cfg.Accounts; from += bankLoadBatch {
		to := min(from+bankLoadBatch-1, b.cfg.Accounts)
		var sb strings.Builder
		sb.WriteString("INSERT INTO bench_account (id, balance) VALUES ")
		args := make([]any, 0, 2*(to-from+1))
		for id := from; id <= to; id++ {
			if id > from {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "($%d, $%d)", len(args)+1, len(args)+2)
			args = append(args, id, b.cfg.Initial)
		}
		if _, err := c.Exec(ctx, sb.String(), args...); err != nil {
			return fmt.Errorf("bank: load accounts %d..%d: %w", from, to, err)
		}
	}
	return nil
}

// Check implements Workload: the money is all there, and no balance is
// negative.
func (b *Bank) Check(ctx context.Context, c Conn) error {
	var n, sum, negative int64
	err := c.QueryRow(ctx,
		"SELECT count(*), sum(balance), sum(CASE WHEN balance < 0 THEN 1 ELSE 0 END) FROM bench_account").
		Scan(&n, &sum, &negative)
	if err != nil {
		return fmt.Errorf("bank: check: %w", err)
	}
	want := int64(b.cfg.Accounts) * b.cfg.Initial
	switch {
	case n != int64(b.cfg.Accounts):
		return fmt.Errorf("bank: %d accounts, want %d", n, b.cfg.Accounts)
	case sum != want:
		return fmt.Errorf("bank: total balance %d, want %d", sum, want)
	case negative != 0:
		return fmt.Errorf("bank: %d accounts below zero", negative)
	}
	return nil
}

// BankOp is one drawn bank transaction.
type BankOp struct {
	// ReadOnly: a balance inquiry of From and To; otherwise a transfer
	// of Amount from From to To (if From has that much).
	ReadOnly bool
	From, To int
	Amount   int64
}

// BankGen draws bank transactions from a seeded source.
type BankGen struct {
	cfg BankConfig
	rng *rand.Rand
}

// NewBankGen returns the generator of client stream; seed and stream fix
// its sequence.
func (b *Bank) NewBankGen(seed, stream uint64) *BankGen {
	return &BankGen{cfg: b.cfg, rng: rand.New(rand.NewPCG(seed, stream))}
}

// Account draws one account: from the hot spot with probability HotShare,
// otherwise uniformly from all accounts.
func (g *BankGen) Account() int {
	if g.cfg.HotShare > 0 && g.rng.Float64() < g.cfg.HotShare {
		return g.rng.IntN(g.cfg.HotAccounts) + 1
	}
	return g.rng.IntN(g.cfg.Accounts) + 1
}

// Op draws the next transaction: two different accounts, an amount of 1
// to 100.
func (g *BankGen) Op() BankOp {
	op := BankOp{ReadOnly: g.cfg.ReadOnly > 0 && g.rng.Float64() < g.cfg.ReadOnly}
	op.From = g.Account()
	for op.To = g.Account(); op.To == op.From; op.To = g.Account() {
	}
	op.Amount = int64(g.rng.IntN(100) + 1)
	return op
}

// Next implements Generator.
func (g *BankGen) Next() Txn {
	op := g.Op()
	if op.ReadOnly {
		var opts pgx.TxOptions
		if g.cfg.DeclareReadOnly {
			opts.AccessMode = pgx.ReadOnly
		}
		return Txn{Kind: KindInquiry, Run: func(ctx context.Context, c Conn) (bool, error) {
			return false, inquiry(ctx, c, opts, op)
		}}
	}
	return Txn{Kind: KindTransfer, Run: func(ctx context.Context, c Conn) (bool, error) {
		return false, transfer(ctx, c, op)
	}}
}

// Generator implements Workload.
func (b *Bank) Generator(i int, seed uint64) Generator { return b.NewBankGen(seed, uint64(i)) }

// transfer locks both accounts (in id order, one statement, so two
// transfers never deadlock on them), and moves the amount if the payer
// has it.
func transfer(ctx context.Context, c Conn, op BankOp) error {
	return inTx(ctx, c, pgx.TxOptions{}, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx,
			"SELECT id, balance FROM bench_account WHERE id IN ($1, $2) ORDER BY id FOR UPDATE", op.From, op.To)
		if err != nil {
			return err
		}
		bal := map[int]int64{}
		for rows.Next() {
			var id int
			var b int64
			if err := rows.Scan(&id, &b); err != nil {
				return err
			}
			bal[id] = b
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(bal) != 2 {
			return fmt.Errorf("bank: accounts %d and %d: %d found", op.From, op.To, len(bal))
		}
		if bal[op.From] < op.Amount {
			return nil // not enough money: nothing to do
		}
		if _, err := tx.Exec(ctx, "UPDATE bench_account SET balance = balance - $1 WHERE id = $2", op.Amount, op.From); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "UPDATE bench_account SET balance = balance + $1 WHERE id = $2", op.Amount, op.To)
		return err
	})
}

// inquiry reads both balances in a transaction that writes nothing.
func inquiry(ctx context.Context, c Conn, opts pgx.TxOptions, op BankOp) error {
	return inTx(ctx, c, opts, func(tx pgx.Tx) error {
		var sum int64
		return tx.QueryRow(ctx,
			"SELECT sum(balance) FROM bench_account WHERE id IN ($1, $2)", op.From, op.To).Scan(&sum)
	})
}

// inTx runs fn in a transaction: COMMIT when it returns nil, ROLLBACK
// otherwise.
func inTx(ctx context.Context, c Conn, opts pgx.TxOptions, fn func(pgx.Tx) error) error {
	tx, err := c.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback(ctx)
		return err
	}
	return tx.Commit(ctx)
}
