// Starts Swagger UI on the served OpenAPI file. It lives in a file of its
// own, not inline in the page, so that the page's Content-Security-Policy
// can forbid inline script. The token entered under "Authorize" stays in
// the page's memory only (persistAuthorization is off).
window.addEventListener("load", function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.dataset.spec,
    dom_id: "#swagger-ui",
    deepLinking: true,
    defaultModelsExpandDepth: -1,
    persistAuthorization: false,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl, function () {
      return { components: { Topbar: function () { return null; } } };
    }],
    layout: "StandaloneLayout"
  });
});
