package bench

// ReportFormat names the layout of the JSON report of `uhno bench --json`.
const ReportFormat = "uhno-bench/1"

// Report is the JSON document of `uhno bench --json`: the machine, the
// conventions and every measured row. Its one definition: the command
// writes it and readers decode it with this type.
type Report struct {
	Format    string     `json:"format"`
	Version   string     `json:"version"`
	Preset    string     `json:"preset,omitempty"`
	Host      Host       `json:"host"`
	Threads   int        `json:"threads"`
	FFTFLOPs  string     `json:"fft_flops_convention"`
	Results   []Result   `json:"results"`
	Overheads []Overhead `json:"overheads,omitempty"`
}
