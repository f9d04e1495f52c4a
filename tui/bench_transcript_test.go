package tui

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// BenchmarkTranscriptPageBigReply pages through a transcript whose reply
// is 10 MB of Markdown: the key that today takes tens of seconds.
func BenchmarkTranscriptPageBigReply(b *testing.B) {
	m := New(newFakeSession(b, syntheticRun(b, 10)), Options{Labels: seedLabels(b), NoAnimation: true, MarkdownStyle: "notty"})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.flowSel = "coder-1-2"
	m.Update(keyMsg("t"))
	if m.transcript == nil {
		b.Fatal("no transcript")
	}
	var tr transcript
	tr.push(transcriptEntry{title: "System prompt", body: "You work alone.", prose: true})
	tr.push(transcriptEntry{title: "Reply", body: bigReply(10 << 20), prose: true})
	tr.push(transcriptEntry{title: "Result of test · success", body: "ok", raw: `{"kind":"success","data":"ok"}`})
	m.transcript.entries = tr.entries
	m.transcript.loaded = true
	m.transcript.prepare(m.overlayWidth()-4, m.overlayBodyH(), m.md)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Update(tea.KeyMsg{Type: tea.KeyPgDown})
		_ = m.View()
	}
}
