package protocompat_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/yrpc/yrpc/examples/hello/hellorpc"
	"github.com/yrpc/yrpc/examples/users/userrpc"
	"github.com/yrpc/yrpc/gen/protocompat/benchpb"
	"github.com/yrpc/yrpc/gen/protocompat/userspb"
	"github.com/yrpc/yrpc/rt"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/descriptorpb"
)

// embedded is a generated package's file descriptor, the descriptor that
// protoc-gen-go compiled from the same .proto file (by regen.sh, with
// protoc), that file, and the package's service descriptors.
var embedded = []struct {
	name     string
	yrpc     []byte
	protoc   protoreflect.FileDescriptor
	file     string
	services []*rt.ServiceDesc
}{
	{"users", userrpc.FileDescriptor(), userspb.File_users_proto, "proto/users.proto", []*rt.ServiceDesc{&userrpc.UsersServiceDesc}},
	{"bench", hellorpc.FileDescriptor(), benchpb.File_bench_proto, "proto/bench.proto", []*rt.ServiceDesc{&hellorpc.HelloServiceDesc}},
}

// TestFileDescriptor decodes the FileDescriptorProto that yrpc's generated
// packages embed (written by yrpc's own encoder, gen/descriptor) with
// protobuf-go and checks that
//   - it equals, field by field (protocmp), the descriptor that protoc made
//     of `yrpcc proto`'s output and protoc-gen-go embedded in userspb and
//     benchpb; and byte for byte after protobuf-go re-encodes protoc's
//     (deterministic, fields in number order as protoc writes them, so the
//     re-encoding is protoc's own serialization);
//   - protodesc builds a valid file of it, whose services and methods are
//     those of the generated rt.ServiceDesc, as reflection will look them up;
//   - when protoc is installed, it is byte for byte what protoc
//     --descriptor_set_out gives for the committed .proto file now.
func TestFileDescriptor(t *testing.T) {
	for _, e := range embedded {
		t.Run(e.name, func(t *testing.T) {
			got := new(descriptorpb.FileDescriptorProto)
			if err := proto.Unmarshal(e.yrpc, got); err != nil {
				t.Fatalf("the embedded descriptor does not decode: %v", err)
			}
			if len(got.ProtoReflect().GetUnknown()) != 0 {
				t.Errorf("the embedded descriptor has fields unknown to descriptor.proto")
			}
			want := protodesc.ToFileDescriptorProto(e.protoc)
			if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
				t.Errorf("embedded descriptor (-protoc +yrpc):\n%s", diff)
			}
			wantBytes, err := proto.MarshalOptions{Deterministic: true}.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(e.yrpc, wantBytes) {
				t.Errorf("the embedded descriptor (%d bytes) differs from protoc's (%d bytes) re-encoded", len(e.yrpc), len(wantBytes))
			}

			fd, err := protodesc.NewFile(got, protoregistry.GlobalFiles)
			if err != nil {
				t.Fatalf("protodesc.NewFile: %v", err)
			}
			for _, sd := range e.services {
				if !bytes.Equal(sd.FileDescriptor, e.yrpc) {
					t.Errorf("%s: ServiceDesc.FileDescriptor is not the package's descriptor", sd.Name)
				}
				name := protoreflect.FullName(sd.Name)
				svc := fd.Services().ByName(name.Name())
				if svc == nil || fd.Package() != name.Parent() {
					t.Errorf("the descriptor has no service %s", sd.Name)
					continue
				}
				if svc.Methods().Len() != len(sd.Methods) {
					t.Errorf("%s: %d methods in the descriptor, %d in the ServiceDesc", sd.Name, svc.Methods().Len(), len(sd.Methods))
				}
				for _, md := range sd.Methods {
					m := svc.Methods().ByName(protoreflect.Name(md.Name))
					if m == nil {
						t.Errorf("the descriptor has no method %s", md.FullName)
						continue
					}
					if req := md.NewRequest(); string(m.Input().Name()) != typeName(req) {
						t.Errorf("%s: input %s, the ServiceDesc's request is %T", md.FullName, m.Input().FullName(), req)
					}
				}
			}

			if fromProtoc := protoc(t, e.file); fromProtoc != nil && !bytes.Equal(e.yrpc, fromProtoc) {
				t.Errorf("the embedded descriptor differs from protoc's for %s", e.file)
			}
		})
	}
}

// typeName is the name of a generated message type: "*userrpc.GetUser" ->
// "GetUser".
func typeName(m rt.Message) string {
	s := fmt.Sprintf("%T", m)
	return s[strings.LastIndexByte(s, '.')+1:]
}

// protoc compiles file (relative to this directory) with protoc and returns
// its FileDescriptorProto, or nil, logging why, when protoc is missing.
func protoc(t *testing.T, file string) []byte {
	t.Helper()
	bin, err := exec.LookPath("protoc")
	if err != nil {
		t.Logf("protoc is not installed (Debian: apt-get install protobuf-compiler): not compared with protoc's output of %s", file)
		return nil
	}
	out := filepath.Join(t.TempDir(), "set.pb")
	args := []string{"-I" + filepath.Dir(file), "--descriptor_set_out=" + out, file}
	if _, err := os.Stat("/usr/include/google/protobuf/timestamp.proto"); err == nil {
		args = append([]string{"-I/usr/include"}, args...)
	}
	if msg, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s", err, msg)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// A FileDescriptorSet of one file: field 1, holding the file's bytes
	// as protoc wrote them.
	num, typ, n := protowire.ConsumeTag(data)
	if n < 0 || num != 1 || typ != protowire.BytesType {
		t.Fatalf("protoc wrote no FileDescriptorSet: % x", data[:min(len(data), 16)])
	}
	fileDesc, m := protowire.ConsumeBytes(data[n:])
	if m < 0 || n+m != len(data) {
		t.Fatalf("protoc's descriptor set does not hold one file")
	}
	return fileDesc
}
