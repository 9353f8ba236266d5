package policy

import "k8s.io/apimachinery/pkg/api/resource"

type resourceQuantity = resource.Quantity
