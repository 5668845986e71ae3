// Package promql runs PromQL test scripts (promqltest's format: load, eval) on Prometheus's own engine.
// tests/unit/test_serve_promql.py writes the script from wmap serve's real /metrics output and the recipes of
// docs/serve.md, and runs `go test` here with RECIPES naming it.
package promql

import (
	"os"
	"testing"

	"github.com/prometheus/prometheus/promql/promqltest"
)

func TestRecipes(t *testing.T) {
	path := os.Getenv("RECIPES")
	if path == "" {
		t.Skip("RECIPES is not set: run tests/unit/test_serve_promql.py")
	}
	script, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	engine := promqltest.NewTestEngine(t, false, 0, promqltest.DefaultMaxSamplesPerQuery)
	promqltest.RunTest(t, string(script), engine)
}
