package main

import (
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func clientcmdFlatten(cfg *clientcmdapi.Config) error { return clientcmdapi.FlattenConfig(cfg) }
