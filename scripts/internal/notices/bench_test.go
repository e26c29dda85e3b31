package notices

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/licensecheck"
)

// BenchmarkDetect classifies one module's license file once licensecheck
// is initialised; BenchmarkReadLicense is the floor (reading the file).
// The one-time initialisation of licensecheck's full license set is the
// larger cost of a run: see BenchmarkScannerInit.
func BenchmarkDetect(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "LICENSE"), []byte(mitText), 0o644); err != nil {
		b.Fatal(err)
	}
	licensecheck.Scan(nil)
	b.ResetTimer()
	for b.Loop() {
		if d, err := Detect(dir); err != nil || d.Problem != "" {
			b.Fatal(err, d.Problem)
		}
	}
}

func BenchmarkReadLicense(b *testing.B) {
	dir := b.TempDir()
	name := filepath.Join(dir, "LICENSE")
	if err := os.WriteFile(name, []byte(mitText), 0o644); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := os.ReadFile(name); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScannerInit builds a scanner over licensecheck's full license
// set, which Scan does once per process.
func BenchmarkScannerInit(b *testing.B) {
	all := licensecheck.BuiltinLicenses()
	for b.Loop() {
		if _, err := licensecheck.NewScanner(all); err != nil {
			b.Fatal(err)
		}
	}
}
