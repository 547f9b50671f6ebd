package interop_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/dynamicpb"

	pb "github.com/yrpc/yrpc/interop/userspb"
)

// grpc-go's reflection client resolves google.rpc.BadRequest and
// google.rpc.Status into files equal to googleapis' (genproto's), and the
// BadRequest of a failed Validate decodes with the reflected descriptor
// alone, as grpcurl decodes it.
func TestReflectionErrorDetails(t *testing.T) {
	e := start(t, transports(t)[0])
	r := newReflector(t, e.conn)
	var badRequest protoreflect.MessageDescriptor
	for _, c := range []struct {
		symbol string
		want   protoreflect.FileDescriptor
	}{
		{"google.rpc.BadRequest", errdetails.File_google_rpc_error_details_proto},
		{"google.rpc.Status", statuspb.File_google_rpc_status_proto},
	} {
		d, err := r.files(c.symbol).FindDescriptorByName(protoreflect.FullName(c.symbol))
		if err != nil {
			t.Fatalf("%s: %v", c.symbol, err)
		}
		got := protodesc.ToFileDescriptorProto(d.ParentFile())
		if diff := cmp.Diff(protodesc.ToFileDescriptorProto(c.want), got, protocmp.Transform()); diff != "" {
			t.Errorf("%s's file from reflection (-genproto +reflection):\n%s", c.symbol, diff)
		}
		if c.symbol == "google.rpc.BadRequest" {
			badRequest = d.(protoreflect.MessageDescriptor)
		}
	}

	_, err := e.client.Create(ctxT(t), &pb.CreateUser{Emails: []string{"a@b"}, Address: address("Nice")})
	details := status.Convert(err).Proto().GetDetails()
	if len(details) != 1 || details[0].GetTypeUrl() != "type.googleapis.com/"+string(badRequest.FullName()) {
		t.Fatalf("Create without a name: %v, details %v", err, details)
	}
	br := dynamicpb.NewMessage(badRequest)
	if err := proto.Unmarshal(details[0].GetValue(), br); err != nil {
		t.Fatal(err)
	}
	violations := br.Get(badRequest.Fields().ByName("field_violations")).List()
	if violations.Len() != 1 {
		t.Fatalf("BadRequest %v: %d violations", br, violations.Len())
	}
	v := violations.Get(0).Message()
	if field := v.Get(v.Descriptor().Fields().ByName("field")).String(); field != "name" {
		t.Errorf("the violation names %q, want name", field)
	}
}

// grpcurl, when installed, prints a failed Validate's BadRequest decoded
// (with the descriptor reflection served), not as raw bytes.
func TestGrpcurlErrorDetails(t *testing.T) {
	grpcurl, err := exec.LookPath("grpcurl")
	if err != nil {
		grpcurl = "/root/go/bin/grpcurl"
		if _, err := os.Stat(grpcurl); err != nil {
			t.Skip("grpcurl is not installed (go install github.com/fullstorydev/grpcurl/cmd/grpcurl@latest)")
		}
	}
	e := start(t, transports(t)[0])
	ctx, cancel := context.WithTimeout(ctxT(t), 30*time.Second)
	defer cancel()
	req := `{"emails": ["a@b"], "address": {"street": "1 Main St", "city": "Nice", "zip": "06000", "country": "FR"}}`
	out, err := exec.CommandContext(ctx, grpcurl, "-plaintext", "-d", req, e.addr, "users.Users/Create").CombinedOutput()
	if err == nil {
		t.Fatalf("grpcurl: Create without a name succeeded:\n%s", out)
	}
	for _, want := range []string{"Code: InvalidArgument", `"@type": "type.googleapis.com/google.rpc.BadRequest"`, `"fieldViolations"`, `"field": "name"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("grpcurl's output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "not recognized") {
		t.Errorf("grpcurl did not decode the details:\n%s", out)
	}
}
