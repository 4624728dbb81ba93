package egress

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"syscall"
)

// routedToSelf asks the kernel how it routes a packet to a, as ip route
// get does, and reports whether it delivers it to this machine itself (a
// route of type local). Besides each interface's address, that takes in
// whole prefixes made local without an interface holding them (ip route
// add local 198.51.100.0/24 dev lo, as AnyIP set-ups do), whose addresses
// reach services listening on all interfaces as the interfaces' own do.
// An address with no route at all, or of a family the kernel lacks, is
// not this machine's.
func routedToSelf(a netip.Addr) (bool, error) {
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_RAW|syscall.SOCK_CLOEXEC, syscall.NETLINK_ROUTE)
	if err != nil {
		return false, fmt.Errorf("route of %s: %w", a, err)
	}
	defer syscall.Close(fd)
	kernel := &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}
	if err := syscall.Sendto(fd, routeRequest(a), 0, kernel); err != nil {
		return false, fmt.Errorf("route of %s: %w", a, err)
	}
	buf := make([]byte, 1<<16)
	for {
		n, _, err := syscall.Recvfrom(fd, buf, 0)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("route of %s: %w", a, err)
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return false, fmt.Errorf("route of %s: %w", a, err)
		}
		for _, m := range msgs {
			switch {
			case m.Header.Seq != routeSeq:
				continue
			case m.Header.Type == syscall.NLMSG_ERROR && len(m.Data) >= 4:
				errno := syscall.Errno(-int32(binary.NativeEndian.Uint32(m.Data)))
				switch errno {
				case syscall.ENETUNREACH, syscall.EHOSTUNREACH, syscall.EAFNOSUPPORT:
					return false, nil // no route (or no IPv6 at all): nothing to reach
				}
				return false, fmt.Errorf("route of %s: %w", a, errno)
			case m.Header.Type == syscall.RTM_NEWROUTE && len(m.Data) >= syscall.SizeofRtMsg:
				// struct rtmsg: family, dst_len, src_len, tos, table,
				// protocol, scope, type, flags.
				return m.Data[7] == syscall.RTN_LOCAL, nil
			}
		}
	}
}

// routeSeq is the sequence number of routedToSelf's request.
const routeSeq = 1

// routeRequest is the netlink message asking the kernel for its route to
// a: a header, a struct rtmsg and the attribute RTA_DST.
func routeRequest(a netip.Addr) []byte {
	family, dst := byte(syscall.AF_INET6), a.AsSlice()
	if a.Is4() {
		family = syscall.AF_INET
	}
	attrLen := syscall.SizeofRtAttr + len(dst) // 4-aligned: 8 or 20
	size := syscall.NLMSG_HDRLEN + syscall.SizeofRtMsg + attrLen
	b := make([]byte, size)
	binary.NativeEndian.PutUint32(b[0:], uint32(size))
	binary.NativeEndian.PutUint16(b[4:], syscall.RTM_GETROUTE)
	binary.NativeEndian.PutUint16(b[6:], syscall.NLM_F_REQUEST)
	binary.NativeEndian.PutUint32(b[8:], routeSeq)
	rt := b[syscall.NLMSG_HDRLEN:]
	rt[0], rt[1] = family, byte(len(dst)*8)
	attr := rt[syscall.SizeofRtMsg:]
	binary.NativeEndian.PutUint16(attr[0:], uint16(attrLen))
	binary.NativeEndian.PutUint16(attr[2:], syscall.RTA_DST)
	copy(attr[syscall.SizeofRtAttr:], dst)
	return b
}
