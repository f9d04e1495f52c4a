package provider

import (
	"io"
	"time"
)

// drainingBody makes Close read what is left of the body first, up to
// 64 KiB or drainWait. The SDKs' streams close the body as soon as they
// have the last event ([DONE], response.completed, message_stop), usually
// before the end of the chunked body has been read, and a body closed
// before its end takes its connection with it: every turn would dial anew
// (and, against a hosted API, shake hands over TLS anew). A server that
// keeps the stream open after its last event costs at most drainWait.
type drainingBody struct{ io.ReadCloser }

func (b drainingBody) Close() error {
	stop := time.AfterFunc(drainWait, func() { _ = b.ReadCloser.Close() })
	_, _ = io.CopyN(io.Discard, b.ReadCloser, 64<<10)
	stop.Stop()
	return b.ReadCloser.Close()
}

// drainWait bounds drainingBody.Close.
const drainWait = 50 * time.Millisecond
