package bench

import (
	"fmt"
	"image/color"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// modeStyle gives each mode a fixed colour and marker, so plots of
// different runs read alike.
var modeStyle = map[string]struct {
	c     color.RGBA
	glyph draw.GlyphDrawer
	dash  []vg.Length
}{
	ModeBound:        {color.RGBA{0x55, 0x55, 0x55, 0xff}, draw.BoxGlyph{}, []vg.Length{vg.Points(4), vg.Points(3)}},
	ModeDirect:       {color.RGBA{0x00, 0x00, 0x00, 0xff}, draw.CircleGlyph{}, nil},
	ModePassthrough:  {color.RGBA{0x8c, 0x56, 0x4b, 0xff}, draw.TriangleGlyph{}, nil},
	ModeCBS:          {color.RGBA{0x1f, 0x77, 0xb4, 0xff}, draw.CircleGlyph{}, nil},
	ModeSS:           {color.RGBA{0xff, 0x7f, 0x0e, 0xff}, draw.SquareGlyph{}, nil},
	ModeSerial:       {color.RGBA{0xd6, 0x27, 0x28, 0xff}, draw.CrossGlyph{}, nil},
	ModeDirectPG:     {color.RGBA{0x2c, 0xa0, 0x2c, 0xff}, draw.PyramidGlyph{}, nil},
	ModeDirectSQLite: {color.RGBA{0x94, 0x67, 0xbd, 0xff}, draw.RingGlyph{}, nil},
	ModeCBSLocking:   {color.RGBA{0x17, 0xbe, 0xcf, 0xff}, draw.RingGlyph{}, []vg.Length{vg.Points(2), vg.Points(2)}},
}

// Plot draws throughput against clients, one line per mode (the paper's
// Figure 7 style), and saves it to each of paths; the extension picks the
// format (.png, .svg, .pdf).
func Plot(points []Point, title string, paths ...string) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "clients"
	p.Y.Label.Text = "transactions per second"
	p.Y.Min = 0
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.Padding = vg.Points(2)
	p.Add(plotter.NewGrid())
	var modes []string
	var ticks []plot.Tick
	for _, pt := range points {
		if !slices.Contains(modes, pt.Mode) {
			modes = append(modes, pt.Mode)
		}
		if !slices.ContainsFunc(ticks, func(t plot.Tick) bool { return t.Value == float64(pt.Clients) }) {
			ticks = append(ticks, plot.Tick{Value: float64(pt.Clients), Label: fmt.Sprint(pt.Clients)})
		}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	// Room above the highest line for the legend, one row per mode.
	top := 0.0
	for _, pt := range points {
		if pt.Runs > 0 {
			top = max(top, pt.Result.Throughput)
		}
	}
	p.Y.Max = top * (1.15 + 0.09*float64(len(modes)))
	for _, mode := range modes {
		var xys plotter.XYs
		for _, pt := range points {
			if pt.Mode == mode && pt.Runs > 0 {
				xys = append(xys, plotter.XY{X: float64(pt.Clients), Y: pt.Result.Throughput})
			}
		}
		if len(xys) == 0 {
			continue
		}
		slices.SortFunc(xys, func(a, b plotter.XY) int {
			switch {
			case a.X < b.X:
				return -1
			case a.X > b.X:
				return 1
			}
			return 0
		})
		line, scatter, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		st, ok := modeStyle[mode]
		if !ok {
			st.c, st.glyph = color.RGBA{0x17, 0xbe, 0xcf, 0xff}, draw.CircleGlyph{}
		}
		line.Color, line.Width, line.Dashes = st.c, vg.Points(1.5), st.dash
		scatter.Color, scatter.Shape, scatter.Radius = st.c, st.glyph, vg.Points(3)
		p.Add(line, scatter)
		p.Legend.Add(mode, line, scatter)
	}
	for _, path := range paths {
		if err := p.Save(16*vg.Centimeter, 10*vg.Centimeter, path); err != nil {
			return fmt.Errorf("bench: plot %s: %w", path, err)
		}
	}
	return nil
}
