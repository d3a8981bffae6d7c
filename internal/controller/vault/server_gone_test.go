/*
Copyright 2026 The vault-keycloak-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package vault

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/watches"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient/vaultfake"
)

// A VaultServer deleted for good: the VaultApp watch, which every shard
// runs, drops its client (a later server of that name logs in afresh) and
// still hands the deletion on.
func TestDeletedServerIsForgottenByTheVaultAppWatch(t *testing.T) {
	built := 0
	servers := &ClusterDestinations{Clients: &ServerClients{New: func(vaultclient.Config) (ServerClient, error) {
		built++
		return &fakeChecker{Vault: vaultfake.New()}, nil
	}}}
	eu := &vaultv1beta1.VaultServer{ObjectMeta: metav1.ObjectMeta{Name: "eu"}, Spec: vaultv1beta1.VaultServerSpec{Address: "https://eu.example.com"}}
	ctx := context.Background()
	for range 2 {
		if _, err := servers.Clients.For(ctx, eu); err != nil {
			t.Fatal(err)
		}
	}
	if built != 1 {
		t.Fatalf("clients built for one unchanged server: %d, want 1", built)
	}

	handedOn := ""
	var h handler.EventHandler = watches.ForgetOnDelete{
		EventHandler: handler.Funcs{DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			handedOn = e.Object.GetName()
		}},
		Forget: forgetter(servers).Forget,
	}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	h.Update(ctx, event.UpdateEvent{ObjectOld: eu, ObjectNew: eu}, q)
	if _, err := servers.Clients.For(ctx, eu); err != nil || built != 1 {
		t.Fatalf("after an update: %d clients built (%v), want the one kept", built, err)
	}
	h.Delete(ctx, event.DeleteEvent{Object: eu}, q)
	if handedOn != "eu" {
		t.Errorf("the deletion handed on for %q, want eu", handedOn)
	}
	if _, err := servers.Clients.For(ctx, eu); err != nil || built != 2 {
		t.Errorf("after the deletion: %d clients built (%v), want a new one", built, err)
	}
}
