package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/shepherd-db/shepherd/internal/workload/tpcc"
)

// TPCC is the TPC-C-style workload of package tpcc: its schema and
// loader, the five transactions in the standard mix, and its consistency
// checker.
type TPCC struct {
	scale    tpcc.Scale
	loadSeed uint64
	mix      tpcc.Mix
}

// TPCCConfig configures the TPC-C workload.
type TPCCConfig struct {
	tpcc.Scale
	// LoadSeed makes the data (the same seed and scale load the same rows
	// on every engine).
	LoadSeed uint64
	// Mix weighs the transaction types (zero: the standard 45/43/4/4/4).
	Mix tpcc.Mix
}

// loadTime is the timestamp the loader writes: fixed, so that databases
// loaded separately hold the same rows.
var loadTime = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// NewTPCC returns the TPC-C workload for cfg.
func NewTPCC(cfg TPCCConfig) (*TPCC, error) {
	if err := cfg.Scale.Validate(); err != nil {
		return nil, err
	}
	if cfg.Mix == (tpcc.Mix{}) {
		cfg.Mix = tpcc.StandardMix
	}
	if err := cfg.Mix.Validate(); err != nil {
		return nil, err
	}
	return &TPCC{scale: cfg.Scale, loadSeed: cfg.LoadSeed, mix: cfg.Mix}, nil
}

// Name implements Workload.
func (w *TPCC) Name() string { return "tpcc" }

// Kinds implements Workload.
func (w *TPCC) Kinds() []string {
	out := make([]string, tpcc.NumTxTypes)
	for t := range tpcc.NumTxTypes {
		out[t] = t.String()
	}
	return out
}

// Load implements Workload: drops the nine tables, then creates and fills
// them.
func (w *TPCC) Load(ctx context.Context, c Conn) error {
	if err := tpcc.DropTables(ctx, c); err != nil {
		return err
	}
	return tpcc.Load(ctx, c, tpcc.LoadConfig{Scale: w.scale, Seed: w.loadSeed, LoadTime: loadTime})
}

// Check implements Workload: the consistency conditions of package tpcc.
func (w *TPCC) Check(ctx context.Context, c Conn) error { return tpcc.Check(ctx, c) }

// Generator implements Workload. Client i's home warehouse is i mod W + 1
// and its district (i div W) mod 10 + 1, as tpcc.Run does.
func (w *TPCC) Generator(i int, seed uint64) Generator {
	g, err := tpcc.NewGenerator(tpcc.GeneratorConfig{
		Scale:     w.scale,
		Constants: tpcc.RunConstants(tpcc.LoadConstants(w.loadSeed), seed),
		Mix:       w.mix,
		HomeWID:   i%w.scale.Warehouses + 1,
		HomeDID:   (i/w.scale.Warehouses)%tpcc.DistrictsPerWarehouse + 1,
		Seed:      seed,
		Stream:    uint64(i),
	})
	if err != nil {
		panic(err) // NewTPCC validated the scale and mix
	}
	return tpccGen{g}
}

type tpccGen struct{ g *tpcc.Generator }

// Next implements Generator.
func (g tpccGen) Next() Txn {
	typ := g.g.Next()
	in := g.g.Input(typ)
	return Txn{Kind: typ.String(), Run: func(ctx context.Context, c Conn) (bool, error) {
		return runTPCC(ctx, c, in)
	}}
}

// runTPCC runs the transaction whose input is in.
func runTPCC(ctx context.Context, c Conn, in any) (rolledBack bool, err error) {
	switch in := in.(type) {
	case tpcc.NewOrderInput:
		out, err := tpcc.NewOrder(ctx, c, in)
		return out.RolledBack, err
	case tpcc.PaymentInput:
		_, err = tpcc.Payment(ctx, c, in)
	case tpcc.OrderStatusInput:
		_, err = tpcc.OrderStatus(ctx, c, in)
	case tpcc.DeliveryInput:
		_, err = tpcc.Delivery(ctx, c, in)
	case tpcc.StockLevelInput:
		_, err = tpcc.StockLevel(ctx, c, in)
	default:
		err = fmt.Errorf("tpcc: no transaction takes %T", in)
	}
	return false, err
}
