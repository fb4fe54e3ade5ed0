// Package config holds the typed configuration of one uhno task: the PDE and
// its dataset, the U-HNO model, the loss, the SPAR router, the optimizer and
// the seed.
//
// A Config is built in layers. Each layer is a map of values keyed by the
// dotted names that Keys lists (for example "optim.lr" or "model.c0"), with
// nested maps allowed ("optim" -> {"lr": ...}). Apply sets a layer's values
// on a Config, checking every key and converting every value strictly: an
// unknown key is an error that names the nearest valid key, and a value of
// the wrong type (a string where an integer is wanted, 32.5 for a channel
// count) is an error that names the key, the value and the wanted type.
// Strings are parsed, so values coming from environment variables and
// command-line flags go through the same checks as YAML values.
//
// Validate then checks the whole Config against the paper's constraints and
// the task's own rules (for example a viscosity only where the PDE has one,
// rho_min <= rho_max, a warmup shorter than the run). All errors are one line
// and start with "config: ".
//
// The package reads no files and no environment and does not import viper:
// the command package reads the sources (built-in YAML, --config file,
// environment, flags) and hands each one to Apply in order of precedence.
package config
