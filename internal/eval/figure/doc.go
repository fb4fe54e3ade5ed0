// Package figure draws the evaluation's PNG figures with gonum.org/v1/plot:
// space–time plots of 1D rollouts and snapshot grids of 2D ones (truth,
// prediction, |error|; the paper's appendix figures "qualitative-1d" and
// "qualitative-2d"), error-growth curves per model, and the SPAR routing
// masks g per U-shape level over the predicted field (figure "routing").
//
// # Inputs
//
// Fields are plain row-major float32 slices, indexed like the data files
// (package data): a 1D rollout [steps, n] (time, then x) and a 2D field
// [nx, ny] (x, then y: value (i, j) at i*ny + j). x is drawn horizontally,
// t or y vertically. Every function checks its arguments before drawing
// and answers a mismatch (a length against a shape, an empty series, an
// inverted extent) with a one-line error naming the argument.
//
// # Output
//
// Each function renders the whole figure in memory at 150 dpi, then writes
// it to a temporary file next to path and renames it over path, so a
// figure is either complete or absent, never half written, and a failed
// call leaves nothing behind. The directory must exist. Errors start with
// "figure: <path>:". A panic inside gonum/plot while drawing is returned
// as an error rather than ending an evaluation run. Pixel sizes are fixed
// by the layout (each function's comment gives them), so figures of the
// same kind line up in a report.
//
// Lines of many points (a training loss logged every 10 of 20,000 steps,
// eight runs to a figure) are drawn as polylines: thinned to the first,
// lowest, highest and last point of each quarter-pixel column and stroked
// in short runs, which draws the same pixels in time linear in the points
// where gonum's own line, through freetype's rasteriser, is quadratic in
// them (polyline.go).
//
// The legends of line and bar plots stand on a white backdrop at 85%
// opacity (legend.go): a curve that passes under a legend's corner shows
// as a faint trace instead of running through its text. Heat-map legends
// (white text on the map) are drawn as gonum draws them.
//
// # Colour
//
// Signed fields use Moreland's smooth blue–red diverging map; when the
// values straddle zero the range is made symmetric so that zero is the
// neutral mid colour. Truth and prediction share one range (the union of
// both), so a blown-up prediction shows as such. Errors and other
// magnitudes use Moreland's black-body map from 0 (black) to the largest
// error. Routing masks use the diverging map on the fixed range [0, 1]:
// red is g = 1 (Fourier branch), blue g = 0 (Gaussian branch), as in the
// paper. Non-finite values (a crashed rollout) are left out of every range
// and drawn green, a colour neither map uses; a panel that holds any says
// how many in its title. Heat maps are rasterised by nearest cell at the
// output resolution (gonum's own raster heat map scales with bilinear
// interpolation, which would blur hard masks and shock fronts).
package figure
