// The React page of test/runtime/react-chromium.test.ts, bundled by the test with esbuild: the
// built vane/client and vane/react files with React, as an app would ship them. The page's
// fetch shortens the config's max-age to 1 s so the test need not wait the contract's 60 s.
import { createElement, useRef } from "react";
import { createRoot } from "react-dom/client";
import { createClient } from "../../../dist/client/vane-client.js";
import { VaneProvider, useConfigVersion, useFlag, useFlagDetails } from "../../../dist/client/vane-react.js";

const params = new URLSearchParams(location.search);
const context = { userId: params.get("user")!, accountId: "acct-1", country: "US" };

const quickPolls: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  if (!String(input).includes("/v1/config/")) return response;
  const headers = new Headers(response.headers);
  headers.set("Cache-Control", "max-age=1");
  return new Response(response.status === 304 ? null : await response.text(), { status: response.status, headers });
};

function Checkout() {
  const renders = useRef(0);
  renders.current++;
  const color = useFlag("checkout.buttonColor", "none", context);
  const oneClick = useFlag("checkout.oneClick", false, context);
  const details = useFlagDetails("checkout.buttonColor", "none", context);
  const version = useConfigVersion();
  return createElement(
    "p",
    { id: "checkout", "data-version": version, "data-renders": renders.current, "data-reason": details.reason },
    `${color} ${oneClick ? "one-click" : "classic"}`,
  );
}

const client = await createClient({
  baseUrl: params.get("server")!,
  apiKey: params.get("key")!,
  projectId: params.get("project")!,
  wasm: new URL("/client/vane.wasm", location.href),
  fetch: quickPolls,
});
// For the test's getter checks on generated contexts.
(window as unknown as { vane: typeof client }).vane = client;
createRoot(document.getElementById("root")!).render(createElement(VaneProvider, { client }, createElement(Checkout)));
