package procfs

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// TCPOwners finds the local processes that own TCP sockets bound to the
// given local addresses ("127.0.0.1:54321", "[::1]:54321"): the pid of
// each address found, keyed by the address as given. It reads
// /proc/net/tcp and tcp6 for the sockets' inodes, then every process's
// fd links for "socket:[inode]", as ss -p does; an address no process
// here owns (a remote host's) is absent. Processes it may not read are
// passed over.
func TCPOwners(addrs []string) map[string]int {
	want := map[netip.AddrPort]string{}
	for _, a := range addrs {
		if ap, err := netip.ParseAddrPort(a); err == nil {
			want[unmap(ap)] = a
		}
	}
	inodes := map[string]string{} // inode -> address as given
	for _, f := range []string{Root + "/net/tcp", Root + "/net/tcp6"} {
		readTCP(f, func(local netip.AddrPort, inode string) {
			if a, ok := want[unmap(local)]; ok && inode != "0" {
				inodes[inode] = a
			}
		})
	}
	out := map[string]int{}
	if len(inodes) == 0 {
		return out
	}
	pids, _ := Pids()
	for _, pid := range pids {
		dir := Root + "/" + strconv.Itoa(pid) + "/fd"
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			l, err := os.Readlink(dir + "/" + fd.Name())
			if err != nil || !strings.HasPrefix(l, "socket:[") {
				continue
			}
			if a, ok := inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")]; ok {
				out[a] = pid
			}
		}
	}
	return out
}

// readTCP calls fn with each socket's local address and inode in a
// /proc/net/tcp-format file.
func readTCP(path string, fn func(local netip.AddrPort, inode string)) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fields := bytes.Fields(sc.Bytes())
		if len(fields) < 10 {
			continue
		}
		if ap, ok := parseHexAddr(string(fields[1])); ok {
			fn(ap, string(fields[9]))
		}
	}
}

// parseHexAddr parses /proc/net/tcp's "0100007F:D431": the address in the
// kernel's byte order per 32-bit word, the port in hex.
func parseHexAddr(s string) (netip.AddrPort, bool) {
	ip, port, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, false
	}
	b, err := hex.DecodeString(ip)
	if err != nil || (len(b) != 4 && len(b) != 16) {
		return netip.AddrPort{}, false
	}
	for i := 0; i < len(b); i += 4 { // each 32-bit word is host (little-endian) order
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return netip.AddrPort{}, false
	}
	addr, _ := netip.AddrFromSlice(b)
	return netip.AddrPortFrom(addr.Unmap(), uint16(p)), true
}

// unmap names an IPv4-mapped IPv6 address by its IPv4 form.
func unmap(ap netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}
