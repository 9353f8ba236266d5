package validation

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// The structure of an object from the bus is checked on the object itself
// (validatePlain) when it can be, and on a tree converted from it
// otherwise; the two must agree on every object: the same document, the
// same errors, the same warnings.
func TestAnObjectIsJudgedAlikeOnItselfAndOnItsTree(t *testing.T) {
	inputs := map[string]string{}
	dir := examplesDir(t)
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !hasManifestExt(p) {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, doc := range strings.Split(string(data), "\n---") {
			js, err := yaml.YAMLToJSON([]byte(doc))
			if err != nil || string(js) == "null" {
				continue
			}
			inputs[filepath.Base(filepath.Dir(p))+"/"+filepath.Base(p)+"#"+string(rune('0'+i))] = string(js)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	deployment := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"app":"web"}},` +
		`"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":1}},` +
		`"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx",` +
		`"resources":{"requests":{"cpu":"100m","memory":"128Mi"}},"ports":[{"containerPort":80}]}]}}}}`
	for name, change := range map[string][2]string{
		"valid":                            {"", ""},
		"a null field":                     {`"replicas":3`, `"replicas":null`},
		"a null list item":                 {`"containers":[`, `"containers":[null,`},
		"an unknown field":                 {`"replicas":3`, `"replicas":3,"replcas":3`},
		"an unknown nested field":          {`"image":"nginx"`, `"image":"nginx","imag":"x"`},
		"a string for an integer":          {`"replicas":3`, `"replicas":"3"`},
		"a fraction for an integer":        {`"replicas":3`, `"replicas":3.5`},
		"an integer out of range":          {`"replicas":3`, `"replicas":4294967296`},
		"a huge integral number":           {`"replicas":3`, `"replicas":1e17`},
		"a negative replica count":         {`"replicas":3`, `"replicas":-1`},
		"a bad quantity":                   {`"cpu":"100m"`, `"cpu":"lots"`},
		"a number for a quantity":          {`"cpu":"100m"`, `"cpu":0.5`},
		"a bad int-or-string":              {`"maxUnavailable":1`, `"maxUnavailable":true`},
		"an object for a string":           {`"image":"nginx"`, `"image":{"name":"nginx"}`},
		"a list for an object":             {`"strategy":{`, `"strategy":[],"x":{`},
		"a status of any shape":            {`"spec":{`, `"status":{"replicas":"many","x":[1,2.5,null]},"spec":{`},
		"a bad label":                      {`"labels":{"app":"web"}},"spec"`, `"labels":{"bad key":"web"}},"spec"`},
		"a bad name":                       {`"name":"web"`, `"name":"Web_1"`},
		"no namespace is defaulted":        {"", ""},
		"a selector that misses the pod":   {`"selector":{"matchLabels":{"app":"web"}}`, `"selector":{"matchLabels":{"app":"db"}}`},
		"an unknown kind":                  {`"kind":"Deployment"`, `"kind":"Deploymnet"`},
		"a float port":                     {`"containerPort":80`, `"containerPort":80.0`},
		"a boolean for a string":           {`"image":"nginx"`, `"image":true`},
		"a Secret-like base64 field below": {`"image":"nginx"`, `"image":"nginx","env":[{"name":"A","value":"b"}]`},
	} {
		inputs["deployment: "+name] = strings.Replace(deployment, change[0], change[1], 1)
	}
	inputs["secret with bad base64"] = `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"a":"not base64!"}}`
	inputs["secret with good base64"] = `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"a":"aGk="},"stringData":{"b":"c"}}`

	for name, js := range inputs {
		t.Run(name, func(t *testing.T) {
			judge := func(tree bool) (Document, []Problem, []Problem) {
				var obj map[string]any
				if err := json.Unmarshal([]byte(js), &obj); err != nil {
					t.Fatal(err)
				}
				if tree {
					return validateAsTree(obj)
				}
				return ValidateObject(obj)
			}
			wantDoc, wantErrs, wantWarns := judge(true)
			gotDoc, gotErrs, gotWarns := judge(false)
			if diff := cmp.Diff(wantDoc, gotDoc); diff != "" {
				t.Errorf("document (-tree +plain):\n%s", diff)
			}
			if diff := cmp.Diff(wantErrs, gotErrs); diff != "" {
				t.Errorf("errors (-tree +plain):\n%s", diff)
			}
			if diff := cmp.Diff(wantWarns, gotWarns); diff != "" {
				t.Errorf("warnings (-tree +plain):\n%s", diff)
			}
		})
	}
}

// The fast way must be taken for what the bus carries most: a valid
// template (else the test above compares the tree with itself).
func TestAValidTemplateIsCheckedOnItself(t *testing.T) {
	var obj map[string]any
	js := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},` +
		`"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`
	if err := json.Unmarshal([]byte(js), &obj); err != nil {
		t.Fatal(err)
	}
	_, rep, ok := validatePlain(obj)
	if !ok || len(rep.errs) > 0 {
		t.Fatalf("a valid Deployment was not checked on itself: ok %v, errors %v", ok, rep)
	}
}
