// storebench report: legend buttons show or hide a series; printing opens
// every collapsed section. Nothing else, nothing fetched.
(function () {
  "use strict";
  document.querySelectorAll("ul.legend button[data-series]").forEach(function (b) {
    b.addEventListener("click", function () {
      var fig = b.closest("figure");
      var hide = b.getAttribute("aria-pressed") !== "false";
      b.setAttribute("aria-pressed", hide ? "false" : "true");
      fig.querySelectorAll("svg [data-series]").forEach(function (g) {
        if (g.getAttribute("data-series") === b.getAttribute("data-series")) {
          g.classList.toggle("off", hide);
        }
      });
    });
  });
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details").forEach(function (d) { d.open = true; });
  });
})();
