module ahp-fuzz.local/bench/wild/go-adapter

go 1.19

require github.com/microsoft/agent-host-protocol/clients/go v0.0.0

// The upstream module is not fetched from the module proxy:
// bench/wild/build-go-adapter.sh CHECKOUT adds
//   replace github.com/microsoft/agent-host-protocol/clients/go => <copy of CHECKOUT/clients/go>
// in a build copy of this directory (the `go` line there follows the toolchain).
