package sandbox

// An unconfined MCP server (sandbox mode none) is a plain process of the
// operator's. When Guildhall stops normally it stops its servers and
// sweeps what they left (it is a child subreaper); but after a kill -9 a
// server that ignores the end of its stdin, and any child that left its
// session, would keep running for ever. So an unconfined server runs under
// a small shim: the guildhall binary re-executed with ServerShimCommand.
// The shim is a child subreaper, so every process the server starts stays
// below it however it daemonises; it holds the read end of a lifeline pipe
// whose only write end is Guildhall's; and when the lifeline ends
// (Guildhall died, however) or the server exits, it kills every process
// below it and exits with the server's status. The server also gets
// PR_SET_PDEATHSIG SIGKILL, so it dies with the shim if the shim is
// killed.

// ServerShimCommand is the hidden sub-command that makes the binary the
// shim of an unconfined server: "-- PATH ARGV0 ARGS...", with the
// lifeline on descriptor 3.
const ServerShimCommand = "__guildhall-server-shim"

// shimLifelineFD is where the shim finds the lifeline (exec.Cmd's first
// ExtraFiles entry).
const shimLifelineFD = 3
