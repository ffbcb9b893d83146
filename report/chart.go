package report

import (
	"bytes"
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// PNGDPI is the resolution of PNG charts; a 10 in wide chart is 1000 px.
const PNGDPI = 100

// Chart is a figure of one or more stacked panels, rendered to PNG and SVG.
// Rendering builds the panels afresh each time, so one Chart renders to the
// same bytes every time (no timestamps, fonts from gonum's embedded
// Liberation collection, no map iteration).
type Chart struct {
	Name   string // file stem: <Name>.png and <Name>.svg
	Title  string // what it shows; the image's alt text in report.md
	Width  vg.Length
	Height vg.Length
	panels func() ([]*plot.Plot, error) // top to bottom
}

// PNG renders the chart as a PNG image at PNGDPI.
func (c *Chart) PNG() ([]byte, error) {
	canvas := vgimg.NewWith(vgimg.UseWH(c.Width, c.Height), vgimg.UseDPI(PNGDPI),
		vgimg.UseBackgroundColor(color.White))
	if err := c.draw(draw.New(canvas)); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: canvas}).WriteTo(&b); err != nil {
		return nil, fmt.Errorf("report: chart %s: png: %w", c.Name, err)
	}
	return b.Bytes(), nil
}

// SVG renders the chart as SVG. Fonts are referenced by name (Liberation
// Sans), not embedded, which keeps files small; viewers without the font
// substitute a similar sans-serif.
func (c *Chart) SVG() ([]byte, error) {
	canvas := vgsvg.New(c.Width, c.Height)
	if err := c.draw(draw.New(canvas)); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := canvas.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("report: chart %s: svg: %w", c.Name, err)
	}
	return b.Bytes(), nil
}

// WriteFiles writes <dir>/<Name>.png and <dir>/<Name>.svg atomically.
func (c *Chart) WriteFiles(dir string) error {
	files, err := c.render()
	if err != nil {
		return err
	}
	return writeFiles(dir, files)
}

func (c *Chart) render() ([]namedFile, error) {
	png, err := c.PNG()
	if err != nil {
		return nil, err
	}
	svg, err := c.SVG()
	if err != nil {
		return nil, err
	}
	return []namedFile{{c.Name + ".png", png}, {c.Name + ".svg", svg}}, nil
}

func (c *Chart) draw(dc draw.Canvas) error {
	if c.panels == nil {
		return fmt.Errorf("report: chart %q was not made by a report chart constructor", c.Name)
	}
	panels, err := c.panels()
	if err != nil {
		return fmt.Errorf("report: chart %s: %w", c.Name, err)
	}
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	if len(panels) == 1 {
		panels[0].Draw(draw.Crop(dc, pad, -pad, pad, -pad))
		return nil
	}
	grid := make([][]*plot.Plot, len(panels))
	for i, p := range panels {
		grid[i] = []*plot.Plot{p}
	}
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadX: pad, PadY: 2 * pad,
		PadTop: pad, PadBottom: pad, PadLeft: pad, PadRight: pad}
	canvases := plot.Align(grid, tiles, dc)
	for i, p := range panels {
		p.Draw(canvases[i][0])
	}
	return nil
}

const pad = 4 * vg.Millimeter

var sansFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

// newPanel returns a plot with a title, axis labels (units in brackets by
// convention of the callers), a light grid under the data, Liberation Sans
// text and a legend in the top left corner.
func newPanel(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Title.TextStyle.Font = font.From(sansFont, 14)
	p.X.Label.TextStyle.Font = font.From(sansFont, 12)
	p.Y.Label.TextStyle.Font = font.From(sansFont, 12)
	p.X.Tick.Label.Font = font.From(sansFont, 10)
	p.Y.Tick.Label.Font = font.From(sansFont, 10)
	p.Legend.TextStyle.Font = font.From(sansFont, 11)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = 2*vg.Millimeter, -2*vg.Millimeter
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 220}
	grid.Horizontal.Color = color.Gray{Y: 220}
	p.Add(grid)
	return p
}

// addLine adds a coloured line (the i-th of the palette, with glyphs when
// marks is true) to p with a legend entry.
func addLine(p *plot.Plot, i int, label string, xys plotter.XYs, marks bool) error {
	line, err := plotter.NewLine(xys)
	if err != nil {
		return fmt.Errorf("series %q: %w", label, err)
	}
	line.Color = plotutil.Color(i)
	line.Width = vg.Points(1.5)
	line.Dashes = plotutil.Dashes(i)
	p.Add(line)
	if !marks {
		p.Legend.Add(label, line)
		return nil
	}
	pts, err := plotter.NewScatter(xys)
	if err != nil {
		return fmt.Errorf("series %q: %w", label, err)
	}
	pts.Color = plotutil.Color(i)
	pts.Shape = plotutil.Shape(i)
	pts.Radius = vg.Points(3)
	p.Add(pts)
	p.Legend.Add(label, line, pts)
	return nil
}
