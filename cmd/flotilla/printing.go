package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/util/jsonpath"
)

// printFlags are kubectl's output flags, printed with kubectl's own
// printers (k8s.io/cli-runtime): -o json|yaml|name|wide|jsonpath=|
// custom-columns=, --no-headers and --show-labels.
type printFlags struct {
	output     string
	noHeaders  bool
	showLabels bool
}

// outputFormats are the -o values, as completion offers them.
var outputFormats = []string{"json", "yaml", "name", "wide", "jsonpath=", "custom-columns="}

func (p *printFlags) register(c *cobra.Command) {
	c.Flags().StringVarP(&p.output, "output", "o", "", "output format: json, yaml, name, wide, jsonpath=TEMPLATE or custom-columns=SPEC")
	c.Flags().BoolVar(&p.noHeaders, "no-headers", false, "print tables without their header")
	c.Flags().BoolVar(&p.showLabels, "show-labels", false, "add a LABELS column to tables")
	_ = c.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return outputFormats, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	})
}

// check refuses an -o value no printer takes.
func (p *printFlags) check() error {
	switch {
	case p.output == "", p.output == "wide", p.output == "json", p.output == "yaml", p.output == "name":
	case p.output == "jsonpath=":
		return errors.New("-o jsonpath=: template format specified but no template given (e.g. -o jsonpath='{.spec.replicas}')")
	case strings.HasPrefix(p.output, "jsonpath="):
		if _, err := printers.NewJSONPathPrinter(p.output[len("jsonpath="):]); err != nil {
			return fmt.Errorf("-o %s: %w", p.output, err)
		}
	case strings.HasPrefix(p.output, "custom-columns="):
		if _, err := parseColumns(p.output[len("custom-columns="):]); err != nil {
			return err
		}
	default:
		return fmt.Errorf("-o %q: want json, yaml, name, wide, jsonpath=TEMPLATE or custom-columns=SPEC", p.output)
	}
	return nil
}

// objects reports whether p prints objects rather than a table.
func (p *printFlags) objects() bool {
	return p.output != "" && p.output != "wide" && !strings.HasPrefix(p.output, "custom-columns=")
}

// wide reports whether the table shows its wide columns.
func (p *printFlags) wide() bool { return p.output == "wide" }

// unstructuredOf turns a JSON-shaped object (a map, or a typed object with
// JSON tags) into an unstructured object with JSON's number types.
func unstructuredOf(obj any) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return u, nil
}

// printObjects prints objs in p's object format: one object alone when
// single (a name was asked for and one object found, as kubectl does), a
// v1 List of them otherwise.
func printObjects(out io.Writer, p *printFlags, objs []*unstructured.Unstructured, single bool) error {
	var obj k8sruntime.Object
	if single && len(objs) == 1 {
		obj = objs[0]
	} else {
		list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}}}
		for _, o := range objs {
			list.Items = append(list.Items, *o)
		}
		obj = list
	}
	var printer printers.ResourcePrinter
	switch {
	case p.output == "json":
		printer = &printers.JSONPrinter{}
	case p.output == "yaml":
		printer = &printers.YAMLPrinter{}
	case p.output == "name":
		printer = &printers.NamePrinter{}
	case strings.HasPrefix(p.output, "jsonpath="):
		jp, err := printers.NewJSONPathPrinter(p.output[len("jsonpath="):])
		if err != nil {
			return err
		}
		jp.AllowMissingKeys(true)
		printer = jp
	default:
		return fmt.Errorf("-o %q prints no objects", p.output)
	}
	if list, ok := obj.(*unstructured.UnstructuredList); ok && p.output == "json" {
		// UnstructuredList marshals items without their list wrapper's order
		// guarantees; print the content as kubectl does.
		return printer.PrintObj(&unstructured.Unstructured{Object: listContent(list)}, out)
	}
	return printer.PrintObj(obj, out)
}

func listContent(l *unstructured.UnstructuredList) map[string]any {
	items := make([]any, 0, len(l.Items))
	for _, it := range l.Items {
		items = append(items, it.Object)
	}
	c := map[string]any{"items": items}
	for k, v := range l.Object {
		c[k] = v
	}
	return c
}

// column is one custom column: a header and a JSONPath.
type column struct {
	header string
	path   *jsonpath.JSONPath
}

// parseColumns reads -o custom-columns=HEADER:.path,HEADER:.path.
func parseColumns(spec string) ([]column, error) {
	var cols []column
	for _, part := range strings.Split(spec, ",") {
		header, path, ok := strings.Cut(part, ":")
		if !ok || header == "" || path == "" {
			return nil, fmt.Errorf("-o custom-columns: %q: want HEADER:JSONPATH, e.g. NAME:.metadata.name", part)
		}
		if !strings.HasPrefix(path, "{") {
			path = "{" + path + "}"
		}
		jp := jsonpath.New(header).AllowMissingKeys(true)
		if err := jp.Parse(path); err != nil {
			return nil, fmt.Errorf("-o custom-columns: %s: %w", header, err)
		}
		cols = append(cols, column{header, jp})
	}
	return cols, nil
}

// customColumns is the table -o custom-columns= asks for over objs.
func customColumns(spec string, objs []*unstructured.Unstructured) (*metav1.Table, error) {
	cols, err := parseColumns(spec)
	if err != nil {
		return nil, err
	}
	t := &metav1.Table{}
	for _, c := range cols {
		t.ColumnDefinitions = append(t.ColumnDefinitions, metav1.TableColumnDefinition{Name: c.header, Type: "string"})
	}
	for _, o := range objs {
		row := metav1.TableRow{Object: k8sruntime.RawExtension{Object: o}}
		for _, c := range cols {
			values, err := c.path.FindResults(o.Object)
			if err != nil {
				return nil, err
			}
			var parts []string
			for _, vs := range values {
				for _, v := range vs {
					parts = append(parts, fmt.Sprint(v.Interface()))
				}
			}
			row.Cells = append(row.Cells, orNone(strings.Join(parts, ",")))
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// printTable prints t with kubectl's table printer: wide columns (Priority
// 1) only for -o wide, a NAMESPACE column first when withNamespace, a
// LABELS column last for --show-labels, no header for --no-headers.
func printTable(out io.Writer, p *printFlags, withNamespace bool, t *metav1.Table) error {
	tp := printers.NewTablePrinter(printers.PrintOptions{NoHeaders: p.noHeaders, Wide: p.wide(), ShowLabels: p.showLabels, WithNamespace: withNamespace})
	return tp.PrintObj(t, out)
}

// tableOf starts a table with the named columns; a name ending in "+" is
// a wide column (shown by -o wide only).
func tableOf(names ...string) *metav1.Table {
	t := &metav1.Table{}
	for _, n := range names {
		c := metav1.TableColumnDefinition{Name: strings.TrimSuffix(n, "+"), Type: "string"}
		if strings.HasSuffix(n, "+") {
			c.Priority = 1
		}
		t.ColumnDefinitions = append(t.ColumnDefinitions, c)
	}
	return t
}

// addRow adds one row for obj (whose namespace and labels the printer
// reads) to t.
func addRow(t *metav1.Table, obj k8sruntime.Object, cells ...any) {
	t.Rows = append(t.Rows, metav1.TableRow{Cells: cells, Object: k8sruntime.RawExtension{Object: obj}})
}
