package report

import "uhno/internal/config"

// The paper's numbers, transcribed from the LaTeX source of "U-HNO: A
// U-shaped Hybrid Neural Operator with Sparse-Point Adaptive Routing for
// Non-stationary PDE Dynamics" (shared/paper/u-hno.tex). Each table cites
// its \label; TestReportPaperMatchesTex parses the tex, when it is at
// ../shared/paper/u-hno.tex from the repository root, and checks every
// cell against these values. Intervals keep the paper's rounding
// ("[.120,.126]" is 0.120, 0.126); bold marks are dropped.

// Value is one number of the paper, with its 95% interval where the paper
// gives one (CI).
type Value struct {
	Mean, Low, High float64
	CI              bool
}

// Row is one row of a paper table: our key for it (a model, "U-HNO",
// "FNO", ..., or an ablation mode, "full" or "A".."I"), the paper's name
// for it, and one cell per column, nil where the paper prints a dash.
type Row struct {
	Key, Name string
	Cells     []*Value
}

// Table is one of the paper's tables.
type Table struct {
	// Label is the table's \label in the tex, e.g. "tab:main-acc".
	Label string
	// Title describes it.
	Title string
	// Columns are the keys of the columns in the paper's order: a task
	// name, "task/metric" with the metric names of package eval ("crash"
	// for the crash rate), a metric name, or a cost column (ColParams...).
	Columns []string
	Rows    []Row
}

// Get returns the paper's value in the row with key row and column col,
// and whether the paper gives one.
func (t *Table) Get(row, col string) (Value, bool) {
	for i, c := range t.Columns {
		if c != col {
			continue
		}
		for _, r := range t.Rows {
			if r.Key == row && r.Cells[i] != nil {
				return *r.Cells[i], true
			}
		}
	}
	return Value{}, false
}

// RowName is the paper's name of the row with key row ("" if none).
func (t *Table) RowName(row string) string {
	for _, r := range t.Rows {
		if r.Key == row {
			return r.Name
		}
	}
	return ""
}

func ci(mean, low, high float64) *Value { return &Value{Mean: mean, Low: low, High: high, CI: true} }
func v(mean float64) *Value             { return &Value{Mean: mean, Low: mean, High: mean} }

var none *Value

func row(key, name string, cells ...*Value) Row { return Row{Key: key, Name: name, Cells: cells} }

// Row keys of the paper's models.
const (
	KeyUHNO     = "U-HNO"
	KeyFNO      = "FNO"
	KeyFNOWider = "FNO-wider"
)

// MainAcc is Tab. main-acc (\label{tab:main-acc}): rollout relL2 per model
// and task with 95% bootstrap intervals.
var MainAcc = Table{Label: "tab:main-acc", Title: "Rollout relL2 on the eight-task suite",
	Columns: config.PaperTaskNames(), Rows: []Row{
		row("FNO", "FNO", ci(0.1229, 0.120, 0.126), ci(0.4708, 0.462, 0.479), ci(0.2675, 0.259, 0.275), ci(0.0407, 0.039, 0.042), ci(0.0115, 0.011, 0.012), ci(0.0068, 0.0065, 0.0071), ci(0.0082, 0.0080, 0.0084), ci(0.852, 0.836, 0.868)),
		row("GNO", "GNO", ci(0.1890, 0.184, 0.194), ci(0.5540, 0.542, 0.566), ci(0.3120, 0.303, 0.321), ci(0.0820, 0.080, 0.084), ci(0.0059, 0.0056, 0.0062), ci(0.0095, 0.0091, 0.0099), ci(0.0420, 0.040, 0.044), ci(0.934, 0.915, 0.953)),
		row("CNO", "CNO", ci(0.2380, 0.230, 0.246), ci(0.6986, 0.680, 0.717), ci(0.1930, 0.186, 0.200), ci(0.0650, 0.063, 0.067), none, ci(0.0072, 0.0068, 0.0076), ci(0.0095, 0.0091, 0.0099), none),
		row("WNO", "WNO", ci(0.1432, 0.140, 0.147), ci(0.5120, 0.500, 0.524), ci(0.2050, 0.198, 0.212), ci(0.0530, 0.051, 0.055), ci(0.1918, 0.185, 0.199), ci(0.0059, 0.0056, 0.0062), ci(0.0102, 0.0098, 0.0106), ci(0.791, 0.775, 0.807)),
		row("FFNO", "FFNO", ci(0.1105, 0.107, 0.114), ci(0.4450, 0.434, 0.456), ci(0.1880, 0.182, 0.194), ci(0.0440, 0.042, 0.046), ci(0.0122, 0.0117, 0.0127), ci(0.0065, 0.0062, 0.0068), ci(0.0080, 0.0077, 0.0083), ci(0.815, 0.798, 0.832)),
		row("Conv-FNO", "Conv-FNO", ci(0.0890, 0.086, 0.092), ci(0.3820, 0.372, 0.392), ci(0.0560, 0.053, 0.059), ci(0.0450, 0.043, 0.047), ci(0.0077, 0.0073, 0.0081), ci(0.0060, 0.0057, 0.0063), ci(0.0098, 0.0094, 0.0102), ci(0.837, 0.819, 0.855)),
		row("LogLo-FNO", "LogLo-FNO", ci(0.1023, 0.099, 0.106), ci(0.4152, 0.404, 0.426), ci(0.0535, 0.051, 0.056), ci(0.0756, 0.073, 0.078), ci(0.0093, 0.0089, 0.0097), ci(0.0087, 0.0083, 0.0091), ci(0.0115, 0.0111, 0.0119), ci(0.802, 0.785, 0.819)),
		row("U-HNO", "U-HNO", ci(0.0416, 0.0402, 0.0430), ci(0.4050, 0.395, 0.415), ci(0.0502, 0.0480, 0.0524), ci(0.0610, 0.059, 0.063), ci(0.0092, 0.0088, 0.0096), ci(0.0063, 0.0060, 0.0066), ci(0.0072, 0.0069, 0.0075), ci(0.728, 0.712, 0.744)),
	}}

// MainAccH1 is Tab. main-acc-h1 (\label{tab:main-acc-h1}): rollout relH1
// per model and task with 95% bootstrap intervals.
var MainAccH1 = Table{Label: "tab:main-acc-h1", Title: "Rollout relH1 on the eight-task suite",
	Columns: config.PaperTaskNames(), Rows: []Row{
		row("FNO", "FNO", ci(0.2158, 0.211, 0.221), ci(0.5080, 0.497, 0.519), ci(0.3120, 0.303, 0.321), ci(0.0525, 0.051, 0.054), ci(0.0231, 0.022, 0.024), ci(0.0099, 0.0095, 0.0103), ci(0.0192, 0.0185, 0.0199), ci(0.918, 0.899, 0.937)),
		row("GNO", "GNO", ci(0.3012, 0.294, 0.309), ci(0.6012, 0.587, 0.615), ci(0.3640, 0.354, 0.374), ci(0.0973, 0.094, 0.101), ci(0.0124, 0.0119, 0.0129), ci(0.0121, 0.0116, 0.0126), ci(0.0530, 0.050, 0.056), ci(1.024, 1.001, 1.047)),
		row("CNO", "CNO", ci(0.9333, 0.908, 0.958), ci(0.7152, 0.694, 0.736), ci(0.4383, 0.425, 0.452), ci(0.0770, 0.075, 0.079), none, ci(0.0100, 0.0095, 0.0105), ci(0.0201, 0.0194, 0.0208), none),
		row("WNO", "WNO", ci(0.2472, 0.241, 0.254), ci(0.5520, 0.539, 0.565), ci(0.2410, 0.233, 0.249), ci(0.0640, 0.062, 0.066), ci(0.2021, 0.195, 0.209), ci(0.0082, 0.0078, 0.0086), ci(0.0221, 0.0213, 0.0229), ci(0.852, 0.834, 0.870)),
		row("FFNO", "FFNO", ci(0.1983, 0.193, 0.204), ci(0.4820, 0.470, 0.494), ci(0.2250, 0.217, 0.233), ci(0.0534, 0.052, 0.055), ci(0.0253, 0.024, 0.026), ci(0.0098, 0.0094, 0.0102), ci(0.0190, 0.0183, 0.0197), ci(0.871, 0.852, 0.890)),
		row("Conv-FNO", "Conv-FNO", ci(0.1562, 0.152, 0.160), ci(0.4120, 0.401, 0.423), ci(0.0740, 0.071, 0.077), ci(0.0545, 0.053, 0.056), ci(0.0162, 0.0155, 0.0169), ci(0.0089, 0.0085, 0.0093), ci(0.0208, 0.0200, 0.0216), ci(0.898, 0.878, 0.918)),
		row("LogLo-FNO", "LogLo-FNO", ci(0.1815, 0.177, 0.186), ci(0.4490, 0.437, 0.461), ci(0.0712, 0.068, 0.074), ci(0.0857, 0.083, 0.088), ci(0.0191, 0.0183, 0.0199), ci(0.0102, 0.0098, 0.0106), ci(0.0241, 0.0233, 0.0249), ci(0.862, 0.843, 0.881)),
		row("U-HNO", "U-HNO", ci(0.0418, 0.0405, 0.0431), ci(0.4055, 0.395, 0.416), ci(0.0523, 0.0501, 0.0545), ci(0.0660, 0.064, 0.068), ci(0.0180, 0.0172, 0.0188), ci(0.0090, 0.0086, 0.0094), ci(0.0165, 0.0159, 0.0171), ci(0.772, 0.755, 0.789)),
	}}

// Stability is Tab. stability (\label{tab:stability}): stability at 4x
// the training horizon on Burgers, NS-2D and 3D-CFD: rollout MSE, energy
// drift and crash rate (Wilson intervals).
var Stability = Table{Label: "tab:stability", Title: "Long-horizon stability at 4x the training horizon",
	Columns: []string{"burgers/mse", "burgers/energy_drift", "burgers/crash", "ns2d/mse", "ns2d/energy_drift", "ns2d/crash",
		"cfd3d/mse", "cfd3d/energy_drift", "cfd3d/crash"}, Rows: []Row{
		row("FNO", "FNO", ci(0.155, 0.150, 0.160), ci(0.018, 0.016, 0.020), ci(0.000, 0, 0.003), ci(0.0082, 0.0079, 0.0085), ci(0.005, 0.004, 0.006), ci(0.000, 0, 0.015), ci(0.923, 0.903, 0.943), ci(0.052, 0.048, 0.056), ci(0.000, 0, 0.30)),
		row("GNO", "GNO", ci(0.212, 0.206, 0.218), ci(0.025, 0.023, 0.027), ci(0.000, 0, 0.003), ci(0.0115, 0.0111, 0.0119), ci(0.008, 0.007, 0.009), ci(0.000, 0, 0.015), ci(1.024, 1.001, 1.047), ci(0.061, 0.057, 0.065), ci(0.000, 0, 0.30)),
		row("CNO", "CNO", none, none, none, ci(0.0091, 0.0088, 0.0094), ci(0.006, 0.005, 0.007), ci(0.000, 0, 0.015), none, none, none),
		row("WNO", "WNO", ci(0.131, 0.127, 0.135), ci(0.015, 0.013, 0.017), ci(0.000, 0, 0.003), ci(0.0068, 0.0065, 0.0071), ci(0.004, 0.003, 0.005), ci(0.000, 0, 0.015), ci(0.850, 0.830, 0.870), ci(0.043, 0.040, 0.046), ci(0.000, 0, 0.30)),
		row("FFNO", "FFNO", ci(0.120, 0.116, 0.124), ci(0.013, 0.011, 0.015), ci(0.000, 0, 0.003), ci(0.0071, 0.0068, 0.0074), ci(0.005, 0.004, 0.006), ci(0.000, 0, 0.015), ci(0.871, 0.851, 0.891), ci(0.046, 0.042, 0.050), ci(0.000, 0, 0.30)),
		row("Conv-FNO", "Conv-FNO", ci(0.095, 0.092, 0.098), ci(0.010, 0.008, 0.012), ci(0.000, 0, 0.003), ci(0.0065, 0.0062, 0.0068), ci(0.004, 0.003, 0.005), ci(0.000, 0, 0.015), ci(0.888, 0.867, 0.909), ci(0.049, 0.045, 0.053), ci(0.000, 0, 0.30)),
		row("LogLo-FNO", "LogLo-FNO", ci(0.108, 0.104, 0.112), ci(0.012, 0.010, 0.014), ci(0.000, 0, 0.003), ci(0.0098, 0.0094, 0.0102), ci(0.006, 0.005, 0.007), ci(0.000, 0, 0.015), ci(0.861, 0.841, 0.881), ci(0.044, 0.040, 0.048), ci(0.000, 0, 0.30)),
		row("U-HNO", "U-HNO", ci(0.045, 0.043, 0.047), ci(0.006, 0.005, 0.007), ci(0.000, 0, 0.003), ci(0.0066, 0.0063, 0.0069), ci(0.004, 0.003, 0.005), ci(0.000, 0, 0.015), ci(0.744, 0.725, 0.763), ci(0.031, 0.028, 0.034), ci(0.000, 0, 0.30)),
	}}

// Spectral is Tab. spectral (\label{tab:spectral}): the binned spectral
// error in the low and mid bands and the structure-function error on
// Burgers and NS-2D. The paper gives no high band and no intervals.
var Spectral = Table{Label: "tab:spectral", Title: "Binned spectral error and structure-function error",
	Columns: []string{"burgers/band_low", "burgers/band_mid", "burgers/sf", "ns2d/band_low", "ns2d/band_mid", "ns2d/sf"}, Rows: []Row{
		row("FNO", "FNO", v(0.062), v(0.035), v(0.015), v(0.0078), v(0.0045), v(0.0032)),
		row("GNO", "GNO", v(0.085), v(0.048), v(0.020), v(0.0110), v(0.0061), v(0.0041)),
		row("WNO", "WNO", v(0.045), v(0.026), v(0.011), v(0.0058), v(0.0033), v(0.0024)),
		row("FFNO", "FFNO", v(0.038), v(0.024), v(0.010), v(0.0060), v(0.0035), v(0.0025)),
		row("Conv-FNO", "Conv-FNO", v(0.021), v(0.018), v(0.007), v(0.0052), v(0.0031), v(0.0021)),
		row("LogLo-FNO", "LogLo-FNO", v(0.028), v(0.022), v(0.009), v(0.0070), v(0.0040), v(0.0028)),
		row("U-HNO", "U-HNO", v(0.015), v(0.010), v(0.004), v(0.0042), v(0.0023), v(0.0017)),
	}}

// Cost columns: parameters in millions, forward GFLOPs per sample, train
// and inference milliseconds (per sample, says the caption of Tab. cost),
// peak VRAM in GB.
const (
	ColParams = "params_m"
	ColGFLOPs = "gflops"
	ColTrain  = "train_ms"
	ColInfer  = "infer_ms"
	ColMemory = "vram_gb"
)

// Cost is Tab. cost (\label{tab:cost}): the compute envelope on NS-2D
// (128x128, batch 16, A100).
var Cost = Table{Label: "tab:cost", Title: "Compute envelope on NS-2D (128x128, batch 16, A100)",
	Columns: []string{ColParams, ColGFLOPs, ColTrain, ColInfer, ColMemory}, Rows: []Row{
		row("FNO", "FNO", v(0.5946), v(0.0372), v(3.5237), v(1.2), v(0.015)),
		row("FNO-wider", "FNO-wider", v(3.18), v(0.205), v(7.1), v(3.9), v(0.041)),
		row("GNO", "GNO", v(0.6369), v(5.1999), v(5.3273), v(3.1), v(0.020)),
		row("CNO", "CNO", v(0.6588), v(0.5031), v(9.7063), v(5.8), v(0.022)),
		row("WNO", "WNO", v(0.5993), v(0.9408), v(18.2014), v(2.6), v(0.018)),
		row("FFNO", "FFNO", v(0.5956), v(0.0456), v(4.0940), v(1.8), v(0.016)),
		row("Conv-FNO", "Conv-FNO", v(0.5976), v(4.8888), v(2.0706), v(2.2), v(0.017)),
		row("LogLo-FNO", "LogLo-FNO", v(0.6202), v(0.2469), v(5.0115), v(3.5), v(0.019)),
		row("U-HNO", "U-HNO", v(0.6187), v(0.8115), v(4.6), v(4.0), v(0.023)),
	}}

// FNOWider is Tab. fno-wider (\label{tab:fno-wider}): the latency-matched
// FNO comparison.
var FNOWider = Table{Label: "tab:fno-wider", Title: "Latency-matched FNO comparison",
	Columns: []string{ColParams, ColInfer, "burgers/relL2", "burgers/relH1", "cfd3d/relL2", "cfd3d/relH1"}, Rows: []Row{
		row("FNO", "FNO", v(0.59), v(1.2), v(0.123), v(0.216), v(0.852), v(0.918)),
		row("FNO-wider", "FNO-wider", v(3.18), v(3.9), v(0.118), v(0.208), v(0.846), v(0.912)),
		row("U-HNO", "U-HNO", v(0.62), v(4.0), v(0.042), v(0.042), v(0.728), v(0.772)),
	}}

// CostSPAR is Tab. cost-spar (\label{tab:cost-spar}): SPAR's routing
// overhead on NS-2D against mode F (additive fusion). Row "delta_pct" is
// in percent of Full.
var CostSPAR = Table{Label: "tab:cost-spar", Title: "Routing overhead on NS-2D",
	Columns: []string{ColParams, ColGFLOPs, ColTrain, ColInfer}, Rows: []Row{
		row("F", "Mode F: NoSPAR (additive)", v(0.6182), v(0.8105), v(4.0), v(3.5)),
		row("full", "Full U-HNO (SPAR)", v(0.6187), v(0.8115), v(4.6), v(4.0)),
		row("delta", "Δ (absolute)", v(4.540e-04), v(9.175e-04), v(0.6), v(0.5)),
		row("delta_pct", "Δ (% of Full)", v(0.07), v(0.12), v(13.0), v(12.5)),
	}}

// BurgersAblationTask is the one task Tab. burgers-ablation is about.
const BurgersAblationTask = "burgers"

// BurgersAblation is Tab. burgers-ablation (\label{tab:burgers-ablation}):
// rollout MSE, relL2 and relH1 of Full U-HNO and the modes A-I on Burgers.
var BurgersAblation = Table{Label: "tab:burgers-ablation", Title: "Burgers ablation",
	Columns: []string{"mse", "relL2", "relH1"}, Rows: []Row{
		row("full", "Full U-HNO", v(0.0006), v(0.0416), v(0.0418)),
		row("A", "A: NoLocal", v(0.0082), v(0.1502), v(0.1714)),
		row("B", "B: NoGlobal", v(0.0072), v(0.1408), v(0.1338)),
		row("C", "C: NoCBC", v(0.0031), v(0.0918), v(0.0922)),
		row("D", "D: NoH1", v(0.0014), v(0.0625), v(0.0820)),
		row("E", "E: MSE only", v(0.0009), v(0.0492), v(0.0500)),
		row("F", "F: NoSPAR", v(0.0011), v(0.0561), v(0.0560)),
		row("G", "G: NoUShape", v(0.0015), v(0.0648), v(0.0640)),
		row("H", "H: SymDec", v(0.0024), v(0.0820), v(0.0840)),
		row("I", "I: NoNorm", v(0.0010), v(0.0537), v(0.0539)),
	}}

// AblationExtra is Tab. ablation-extra (\label{tab:ablation-extra}):
// rollout relL2 of every mode on Burgers, NS-2D and 3D-CFD.
var AblationExtra = Table{Label: "tab:ablation-extra", Title: "Extended ablation: rollout relL2",
	Columns: []string{"burgers", "ns2d", "cfd3d"}, Rows: []Row{
		row("full", "Full U-HNO", v(0.0416), v(0.0063), v(0.728)),
		row("A", "A: NoLocal", v(0.1502), v(0.0178), v(2.341)),
		row("B", "B: NoGlobal", v(0.1408), v(0.0151), v(2.104)),
		row("C", "C: NoCBC", v(0.0918), v(0.0094), v(1.346)),
		row("D", "D: NoH1", v(0.0625), v(0.0104), v(1.147)),
		row("E", "E: MSE only", v(0.0492), v(0.0109), v(1.060)),
		row("F", "F: NoSPAR", v(0.0561), v(0.0086), v(0.988)),
		row("G", "G: NoUShape", v(0.0648), v(0.0108), v(1.191)),
		row("H", "H: SymDec", v(0.0820), v(0.0121), v(1.045)),
		row("I", "I: NoNorm", v(0.0537), v(0.0096), v(0.795)),
	}}

// AblationExtraH1 is Tab. ablation-extra-h1
// (\label{tab:ablation-extra-h1}): rollout relH1 of every mode on Burgers,
// NS-2D and 3D-CFD.
var AblationExtraH1 = Table{Label: "tab:ablation-extra-h1", Title: "Extended ablation: rollout relH1",
	Columns: []string{"burgers", "ns2d", "cfd3d"}, Rows: []Row{
		row("full", "Full U-HNO", v(0.0418), v(0.0070), v(0.772)),
		row("A", "A: NoLocal", v(0.1714), v(0.0207), v(2.724)),
		row("B", "B: NoGlobal", v(0.1338), v(0.0154), v(2.085)),
		row("C", "C: NoCBC", v(0.0922), v(0.0105), v(1.431)),
		row("D", "D: NoH1", v(0.0820), v(0.0110), v(1.364)),
		row("E", "E: MSE only", v(0.0500), v(0.0113), v(1.085)),
		row("F", "F: NoSPAR", v(0.0560), v(0.0086), v(0.991)),
		row("G", "G: NoUShape", v(0.0640), v(0.0110), v(1.197)),
		row("H", "H: SymDec", v(0.0840), v(0.0126), v(1.138)),
		row("I", "I: NoNorm", v(0.0539), v(0.0103), v(0.841)),
	}}

// PaperTables lists every transcribed table.
var PaperTables = []*Table{&MainAcc, &MainAccH1, &Stability, &Spectral, &Cost, &FNOWider, &CostSPAR,
	&BurgersAblation, &AblationExtra, &AblationExtraH1}

// Fig. training-dynamics (\label{fig:training-dynamics}) prints no
// numbers; of panel (f) its caption says: endpoint relH1 against rho0 in
// [0.1, 0.7], "with rho0 = 0.30 near the minimum".
const (
	SweepClaimKey  = "spar.rho0"
	SweepClaimBest = 0.30
)
