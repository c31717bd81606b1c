// What the SDK calls itself on the events it sends (sdkName, sdkVersion), unless told otherwise.
// The version follows package.json; test/sdk checks that the two agree.
export const SDK_NAME = "vane-js";
export const SDK_VERSION = "0.1.0";
