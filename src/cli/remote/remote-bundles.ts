// The stored bundles as the verbs read them, through the admin API. Publishing is not a store
// write here: verbs publish through AdminOperations.publishBundle, which the server checks.
import type { BundleStore, BundleSummary, FirstPublication, HistoryEntry, StoredBundle } from "../../store/types.js";
import type { AdminClient } from "./admin-client.js";

const path = (...parts: string[]) => parts.map(encodeURIComponent).join("/");

export class RemoteBundles implements BundleStore {
  constructor(private readonly client: AdminClient) {}

  get(projectId: string, env: string): Promise<StoredBundle | undefined> {
    return this.client.find(`bundles/${path(projectId, env)}`);
  }

  async version(projectId: string, env: string): Promise<string | undefined> {
    return (await this.get(projectId, env))?.bundle.version;
  }

  async orgsOf(projectId: string): Promise<string[]> {
    return [...new Set((await this.list()).filter((b) => b.projectId === projectId).map((b) => b.orgId))];
  }

  async list(): Promise<BundleSummary[]> {
    return (await this.client.call<{ bundles: BundleSummary[] }>("GET", "bundles")).bundles;
  }

  firstPublications(): Promise<FirstPublication[]> {
    return Promise.reject(new Error("the admin API does not serve first publications: only the Parquet copy, on the store, reads them"));
  }

  async history(projectId: string, env: string): Promise<HistoryEntry[]> {
    return (await this.client.call<{ versions: HistoryEntry[] }>("GET", `bundles/${path(projectId, env)}/history`)).versions;
  }

  historyVersion(projectId: string, env: string, version: string): Promise<StoredBundle | undefined> {
    return this.client.find(`bundles/${path(projectId, env)}/history/${encodeURIComponent(version)}`);
  }

  put(): Promise<boolean> {
    return Promise.reject(new Error("a remote bundle is published through the admin API's checked put (AdminOperations.publishBundle)"));
  }

  replace(): Promise<boolean> {
    return this.put();
  }
}
