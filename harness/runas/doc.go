// Package runas is SRV_USER: the identity a server under test starts
// with when it is not trusted with the harness's own (a pull request's).
//
// The harness runs as root and stays so: the server's supervisor is the
// harness's user, so the harness still samples, signals and stops the
// server's whole tree. Only the server's own process gets the User's
// Credential, HOME, USER and LOGNAME (Environ), and a {workdir} of its own
// inside the point's directory (StateDir, mode 0700): it cannot write the
// harness's files (the work dir, OUT, the generator's binary, the
// generator's evidence beside its {workdir}) nor signal the harness, the
// generator or a two-arm sweep's base, whose servers run as the harness
// (their code is trusted). docs/targets.md, "A server you do not trust".
//
// Resolve checks the knob before anything boots (exit 2): a user that
// exists, is not root, on Linux, with a harness that runs as root and so
// may change a child's identity. A nil *User is the harness's own
// identity: its methods leave the environment and credential as they are.
//
// The package reads the user database and makes one directory; it never
// links what boots, measures or judges a point (TestRunasLinksNoRunner).
package runas
