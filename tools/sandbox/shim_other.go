//go:build !linux

package sandbox

import (
	"fmt"
	"io"
)

func shimMain(_ []string, diag io.Writer) int {
	fmt.Fprintln(diag, "guildhall server shim: needs Linux")
	return 2
}
