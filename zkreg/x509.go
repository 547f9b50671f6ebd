package zkreg

import (
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// x509Prefix starts a Roles id of ZooKeeper's x509 scheme.
const x509Prefix = "x509:"

// X509ID returns the Roles id of the x509 identity ZooKeeper gives a
// client that connects over TLS with cert (Options.TLS): "x509:" and the
// certificate's subject DN as ZooKeeper's X509AuthenticationProvider
// names it, which is Java's X500Principal.getName(): RFC 2253, most
// specific attribute first ("x509:CN=web,O=shop"), with the attribute
// names CN, C, L, ST, O, OU, STREET, DC and UID and any other attribute
// (SERIALNUMBER, emailAddress) as OID=#DER-in-hex, and every one of
// ,=+<>#;"\ escaped with a backslash (checked against ZooKeeper 3.8 on
// OpenJDK 17). It fails on a value it cannot name as every Java does (a
// T61, BMP or general string); ZooKeeper logs the id of every client it
// authenticates ("Authenticated Id '…' for Scheme 'x509'").
func X509ID(cert *x509.Certificate) (string, error) {
	var rdns []avaSET
	if rest, err := asn1.Unmarshal(cert.RawSubject, &rdns); err != nil {
		return "", fmt.Errorf("zkreg: x509 id: bad subject: %w", err)
	} else if len(rest) > 0 {
		return "", errors.New("zkreg: x509 id: bad subject: trailing data")
	}
	if len(rdns) == 0 {
		return "", errors.New("zkreg: x509 id: the certificate has an empty subject")
	}
	var b strings.Builder
	b.WriteString(x509Prefix)
	for i := len(rdns) - 1; i >= 0; i-- { // most specific first
		for j, ava := range rdns[i] {
			switch {
			case j > 0:
				b.WriteByte('+')
			case i < len(rdns)-1:
				b.WriteByte(',')
			}
			if err := writeAVA(&b, ava); err != nil {
				return "", fmt.Errorf("zkreg: x509 id: %w", err)
			}
		}
	}
	return b.String(), nil
}

// avaSET is a relative distinguished name: a SET of attributes, each
// value kept raw for its tag.
type avaSET []rawAVA

type rawAVA struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

// rfc2253Name returns the name Java gives an attribute in RFC 2253 names,
// if it has one.
func rfc2253Name(oid string) (string, bool) {
	switch oid {
	case "2.5.4.3":
		return "CN", true
	case "2.5.4.6":
		return "C", true
	case "2.5.4.7":
		return "L", true
	case "2.5.4.8":
		return "ST", true
	case "2.5.4.9":
		return "STREET", true
	case "2.5.4.10":
		return "O", true
	case "2.5.4.11":
		return "OU", true
	case "0.9.2342.19200300.100.1.25":
		return "DC", true
	case "0.9.2342.19200300.100.1.1":
		return "UID", true
	}
	return oid, false
}

// writeAVA writes one attribute as Java's AVA.toRFC2253String does.
func writeAVA(b *strings.Builder, ava rawAVA) error {
	oid := ava.Type.String()
	name, known := rfc2253Name(oid)
	b.WriteString(name)
	b.WriteByte('=')
	s, isString, err := derString(ava.Value)
	switch {
	case !known || !isString:
		b.WriteByte('#')
		b.WriteString(hex.EncodeToString(ava.Value.FullBytes))
	case err != nil:
		return fmt.Errorf("attribute %s: %w", name, err)
	default:
		writeEscaped(b, s)
	}
	return nil
}

// derString decodes v as Java does, if Java prints it as a string.
func derString(v asn1.RawValue) (s string, isString bool, err error) {
	if v.Class != asn1.ClassUniversal {
		return "", false, nil
	}
	switch v.Tag {
	case asn1.TagUTF8String, asn1.TagPrintableString, asn1.TagIA5String:
		return string(v.Bytes), true, nil
	case asn1.TagT61String, asn1.TagBMPString, asn1.TagGeneralString:
		// OpenJDK 17 decodes T61 and BMP strings as UTF-8, others may not.
		return "", true, errors.New("a T61, BMP or general string, which Java versions name differently")
	}
	return "", false, nil
}

// writeEscaped writes s with ,=+<>#;"\ escaped, and leading and trailing
// spaces (and CRs).
func writeEscaped(b *strings.Builder, s string) {
	lead := len(s) - len(strings.TrimLeft(s, " \r"))
	trail := len(strings.TrimRight(s, " \r"))
	for i, c := range s {
		if strings.ContainsRune(`,=+<>#;"\`, c) || i < lead || i >= trail {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
}
