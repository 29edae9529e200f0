// SPDX-License-Identifier: LGPL-2.1-or-later

// A second independent varlink client: the varlink project's own Go library
// (github.com/varlink/go, Debian golang-github-varlink-go-dev), whose IDL
// parser is stricter than the grammar (enum values must start with a
// lowercase letter), against the C server (tests/test-varlink-interop-server.c
// serving io.damon.perfd).  It parses the interface the server describes,
// calls every method the interface declares and checks each reply against the
// declared types, then the standard errors and io.damon.perfd's own.
//
// usage: varlink-interop-go SERVER-BINARY IDL-FILE
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/varlink/go/varlink"
	"github.com/varlink/go/varlink/idl"
)

const timeout = 10 * time.Second

type client struct {
	address string
	idlText string
	iface   *idl.IDL
}

func (c *client) connect() (*varlink.Connection, context.Context, context.CancelFunc, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	conn, err := varlink.NewConnection(ctx, c.address)
	if err != nil {
		cancel()
		return nil, nil, nil, err
	}
	return conn, ctx, cancel, nil
}

// One call and its final reply's parameters, kept raw so that integers and
// floats stay apart when checked against the interface.
func call(ctx context.Context, conn *varlink.Connection, method string, parameters interface{}) (json.RawMessage, error) {
	var out json.RawMessage

	err := conn.Call(ctx, method, parameters, &out)
	return out, err
}

// The interface as the server describes it must be the .varlink file and
// parse with the library's IDL parser.
func (c *client) testInterfaceDescription() error {
	conn, ctx, cancel, err := c.connect()
	if err != nil {
		return err
	}
	defer cancel()
	defer conn.Close()

	description, err := conn.GetInterfaceDescription(ctx, "io.damon.perfd")
	if err != nil {
		return fmt.Errorf("GetInterfaceDescription(io.damon.perfd): %v", err)
	}
	if description != c.idlText {
		return fmt.Errorf("the description differs from the .varlink file")
	}
	iface, err := idl.New(description)
	if err != nil {
		return fmt.Errorf("idl.New(io.damon.perfd): %v", err)
	}
	if iface.Name != "io.damon.perfd" {
		return fmt.Errorf("the interface is named %q", iface.Name)
	}
	for _, name := range []string{"NoSuchTarget", "ConfigurationInvalid"} {
		if findError(iface, name) == nil {
			return fmt.Errorf("the interface declares no error %s", name)
		}
	}
	c.iface = iface

	service, err := conn.GetInterfaceDescription(ctx, "org.varlink.service")
	if err != nil {
		return fmt.Errorf("GetInterfaceDescription(org.varlink.service): %v", err)
	}
	if _, err := idl.New(service); err != nil {
		return fmt.Errorf("idl.New(org.varlink.service): %v", err)
	}
	return nil
}

func (c *client) testGetInfo() error {
	var vendor, product, version, url string
	var interfaces []string

	conn, ctx, cancel, err := c.connect()
	if err != nil {
		return err
	}
	defer cancel()
	defer conn.Close()
	if err := conn.GetInfo(ctx, &vendor, &product, &version, &url, &interfaces); err != nil {
		return err
	}
	if vendor != "damon-perfd" || product != "damon-perfd" || version == "" {
		return fmt.Errorf("vendor %q, product %q, version %q", vendor, product, version)
	}
	if !reflect.DeepEqual(interfaces, []string{"org.varlink.service", "io.damon.perfd"}) {
		return fmt.Errorf("interfaces %v", interfaces)
	}
	return nil
}

// Every method the interface declares, each reply checked against its output
// type: Monitor with "more" until its last reply, Reload as root or refused.
func (c *client) testEveryMethod() error {
	if c.iface == nil {
		return fmt.Errorf("no parsed interface (see the interface description test)")
	}
	conn, ctx, cancel, err := c.connect()
	if err != nil {
		return err
	}
	defer cancel()
	defer conn.Close()

	for _, m := range c.iface.Methods {
		name := "io.damon.perfd." + m.Name
		switch m.Name {
		case "Monitor":
			if err := c.callMore(ctx, conn, m); err != nil {
				return err
			}
			continue
		case "Reload":
			if os.Geteuid() != 0 {
				_, err := call(ctx, conn, name, struct{}{})
				if e, ok := err.(*varlink.Error); !ok || e.Name != "org.varlink.service.PermissionDenied" {
					return fmt.Errorf("%s as uid %d: %v, not PermissionDenied", name, os.Geteuid(), err)
				}
				continue
			}
		}
		out, err := call(ctx, conn, name, struct{}{})
		if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		if err := c.conforms(m.Out, out, m.Name); err != nil {
			return fmt.Errorf("%s replied %s: %v", name, out, err)
		}
	}
	return nil
}

func (c *client) callMore(ctx context.Context, conn *varlink.Connection, m *idl.Method) error {
	receive, err := conn.Send(ctx, "io.damon.perfd."+m.Name, map[string]interface{}{"samples": false}, varlink.More)
	if err != nil {
		return err
	}
	for n := 1; ; n++ {
		var out json.RawMessage

		flags, err := receive(ctx, &out)
		if err != nil {
			return fmt.Errorf("%s, reply %d: %v", m.Name, n, err)
		}
		if err := c.conforms(m.Out, out, m.Name); err != nil {
			return fmt.Errorf("%s replied %s: %v", m.Name, out, err)
		}
		if flags&varlink.Continues == 0 {
			if n != 3 {
				return fmt.Errorf("%s: %d replies, the server sends 3", m.Name, n)
			}
			return nil
		}
	}
}

func (c *client) testStandardErrors() error {
	conn, ctx, cancel, err := c.connect()
	if err != nil {
		return err
	}
	defer cancel()
	defer conn.Close()

	_, err = call(ctx, conn, "io.damon.perfd.Nope", nil)
	if e, ok := err.(*varlink.MethodNotFound); !ok || e.Method != "io.damon.perfd.Nope" {
		return fmt.Errorf("io.damon.perfd.Nope: %#v, not MethodNotFound", err)
	}
	_, err = call(ctx, conn, "org.nowhere.Nope", nil)
	if e, ok := err.(*varlink.InterfaceNotFound); !ok || e.Interface != "org.nowhere" {
		return fmt.Errorf("org.nowhere.Nope: %#v, not InterfaceNotFound", err)
	}
	_, err = conn.GetInterfaceDescription(ctx, "org.nowhere")
	if e, ok := err.(*varlink.InterfaceNotFound); !ok || e.Interface != "org.nowhere" {
		return fmt.Errorf("GetInterfaceDescription(org.nowhere): %#v, not InterfaceNotFound", err)
	}
	for parameter, parameters := range map[string]interface{}{
		"limit": map[string]interface{}{"limit": "ten"},
		"bogus": map[string]interface{}{"bogus": 1},
	} {
		_, err = call(ctx, conn, "io.damon.perfd.GetRegions", parameters)
		if e, ok := err.(*varlink.InvalidParameter); !ok || e.Parameter != parameter {
			return fmt.Errorf("GetRegions(%v): %#v, not InvalidParameter %s", parameters, err, parameter)
		}
	}
	_, err = call(ctx, conn, "io.damon.perfd.Monitor", struct{}{})
	if e, ok := err.(*varlink.Error); !ok || e.Name != "org.varlink.service.ExpectedMore" {
		return fmt.Errorf("Monitor without more: %#v, not ExpectedMore", err)
	}
	return nil
}

// io.damon.perfd's own error, with parameters of its declared type.
func (c *client) testInterfaceError() error {
	if c.iface == nil {
		return fmt.Errorf("no parsed interface (see the interface description test)")
	}
	conn, ctx, cancel, err := c.connect()
	if err != nil {
		return err
	}
	defer cancel()
	defer conn.Close()

	_, err = call(ctx, conn, "io.damon.perfd.GetRegions", map[string]interface{}{"target": 999})
	e, ok := err.(*varlink.Error)
	if !ok || e.Name != "io.damon.perfd.NoSuchTarget" {
		return fmt.Errorf("GetRegions(target 999): %#v, not NoSuchTarget", err)
	}
	raw, _ := e.Parameters.(*json.RawMessage)
	if raw == nil {
		return fmt.Errorf("NoSuchTarget without parameters")
	}
	if err := c.conforms(findError(c.iface, "NoSuchTarget").Type, *raw, "NoSuchTarget"); err != nil {
		return fmt.Errorf("NoSuchTarget %s: %v", *raw, err)
	}
	if !bytes.Equal(bytes.Join(bytes.Fields(*raw), nil), []byte(`{"target":999}`)) {
		return fmt.Errorf("NoSuchTarget parameters %s", *raw)
	}
	out, err := call(ctx, conn, "io.damon.perfd.GetRegions", map[string]interface{}{"target": nil, "limit": 5})
	if err != nil {
		return fmt.Errorf("GetRegions(limit 5): %v", err)
	}
	return c.conforms(findMethod(c.iface, "GetRegions").Out, out, "GetRegions")
}

func findError(iface *idl.IDL, name string) *idl.Error {
	for _, e := range iface.Errors {
		if e.Name == name {
			return e
		}
	}
	return nil
}

func findMethod(iface *idl.IDL, name string) *idl.Method {
	for _, m := range iface.Methods {
		if m.Name == name {
			return m
		}
	}
	return nil
}

func (c *client) conforms(t *idl.Type, raw json.RawMessage, where string) error {
	var v interface{}

	if len(raw) == 0 {
		raw = json.RawMessage("{}") // a reply without parameters has none
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return fmt.Errorf("%s: %v", where, err)
	}
	return c.check(t, v, where)
}

// Whether v is a value of type t: every field declared and present unless
// optional, no field undeclared, enum values among those declared.
func (c *client) check(t *idl.Type, v interface{}, where string) error {
	switch t.Kind {
	case idl.TypeMaybe:
		if v == nil {
			return nil
		}
		return c.check(t.ElementType, v, where)
	case idl.TypeAlias:
		for _, a := range c.iface.Aliases {
			if a.Name == t.Alias {
				return c.check(a.Type, v, where)
			}
		}
		return fmt.Errorf("%s: type %s is not declared", where, t.Alias)
	case idl.TypeBool:
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s: %v is not a bool", where, v)
		}
	case idl.TypeInt:
		if n, ok := v.(json.Number); !ok || strings.ContainsAny(n.String(), ".eE") {
			return fmt.Errorf("%s: %v is not an int", where, v)
		}
	case idl.TypeFloat:
		if _, ok := v.(json.Number); !ok {
			return fmt.Errorf("%s: %v is not a float", where, v)
		}
	case idl.TypeString:
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%s: %v is not a string", where, v)
		}
	case idl.TypeObject:
		if _, ok := v.(map[string]interface{}); !ok {
			return fmt.Errorf("%s: %v is not an object", where, v)
		}
	case idl.TypeEnum:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s: %v is not an enum string", where, v)
		}
		for _, f := range t.Fields {
			if f.Name == s {
				return nil
			}
		}
		return fmt.Errorf("%s: %q is not one of the enum's values", where, s)
	case idl.TypeArray:
		a, ok := v.([]interface{})
		if !ok {
			return fmt.Errorf("%s: %v is not an array", where, v)
		}
		for i, e := range a {
			if err := c.check(t.ElementType, e, fmt.Sprintf("%s[%d]", where, i)); err != nil {
				return err
			}
		}
	case idl.TypeMap:
		o, ok := v.(map[string]interface{})
		if !ok {
			return fmt.Errorf("%s: %v is not a map", where, v)
		}
		for k, e := range o {
			if err := c.check(t.ElementType, e, where+"["+k+"]"); err != nil {
				return err
			}
		}
	case idl.TypeStruct:
		return c.checkStruct(t, v, where)
	default:
		return fmt.Errorf("%s: unknown type kind %d", where, t.Kind)
	}
	return nil
}

func (c *client) checkStruct(t *idl.Type, v interface{}, where string) error {
	o, ok := v.(map[string]interface{})
	if !ok {
		return fmt.Errorf("%s: %v is not an object", where, v)
	}
	declared := map[string]bool{}
	for _, f := range t.Fields {
		declared[f.Name] = true
		e, present := o[f.Name]
		if !present {
			if f.Type.Kind == idl.TypeMaybe {
				continue
			}
			return fmt.Errorf("%s: field %s missing", where, f.Name)
		}
		if err := c.check(f.Type, e, where+"."+f.Name); err != nil {
			return err
		}
	}
	for k := range o {
		if !declared[k] {
			return fmt.Errorf("%s: field %s is not declared", where, k)
		}
	}
	return nil
}

func startServer(binary, socket string) (*exec.Cmd, error) {
	server := exec.Command(binary, socket)
	server.Stderr = os.Stderr
	stdout, err := server.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := server.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "READY" {
		server.Process.Kill()
		server.Wait()
		return nil, fmt.Errorf("server did not start (%q, %v)", line, err)
	}
	return server, nil
}

func stopServer(server *exec.Cmd, socket string) int {
	failed := 0

	server.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- server.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			fmt.Println("FAIL server did not stop cleanly:", err)
			failed++
		}
	case <-time.After(timeout):
		server.Process.Kill()
		fmt.Println("FAIL server did not stop within", timeout)
		failed++
	}
	if _, err := os.Stat(socket); err == nil {
		fmt.Println("FAIL the server left its socket file behind")
		failed++
	}
	return failed
}

func run() int {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: varlink-interop-go SERVER-BINARY IDL-FILE")
		return 2
	}
	idlText, err := os.ReadFile(os.Args[2])
	if err != nil {
		fmt.Println("FAIL", err)
		return 1
	}
	tmp, err := os.MkdirTemp("", "dp-varlink-interop-go-")
	if err != nil {
		fmt.Println("FAIL", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	socket := filepath.Join(tmp, "io.damon.perfd")
	server, err := startServer(os.Args[1], socket)
	if err != nil {
		fmt.Println("FAIL", err)
		return 1
	}

	c := &client{address: "unix:" + socket, idlText: string(idlText)}
	// In this order: the methods called are those of the parsed interface.
	tests := []struct {
		name string
		run  func() error
	}{
		{"interface_description", c.testInterfaceDescription},
		{"get_info", c.testGetInfo},
		{"every_method", c.testEveryMethod},
		{"standard_errors", c.testStandardErrors},
		{"interface_error", c.testInterfaceError},
	}
	passed, failed := 0, 0
	for _, t := range tests {
		if err := t.run(); err != nil {
			fmt.Printf("FAIL %s: %v\n", t.name, err)
			failed++
		} else {
			fmt.Println("PASS", t.name)
			passed++
		}
	}
	if c.iface != nil {
		names := []string{}
		for _, m := range c.iface.Methods {
			names = append(names, m.Name)
		}
		sort.Strings(names)
		fmt.Println("methods called:", strings.Join(names, " "))
	}
	failed += stopServer(server, socket)
	fmt.Printf("%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return 1
	}
	return 0
}

func main() {
	os.Exit(run())
}
