-- Run by tests/editor/test_neovim.py after editors/nvim/sjoin.lua, in the buffer of the spec:
-- waits for the server's diagnostics, asks for a hover at SJOIN_NVIM_HOVER (line:col, 1-based)
-- and writes both, as Neovim has them, to SJOIN_NVIM_OUT as JSON; then quits.
local out = assert(os.getenv("SJOIN_NVIM_OUT"))
local hover_at = vim.split(assert(os.getenv("SJOIN_NVIM_HOVER")), ":")
local wait_ms = tonumber(os.getenv("SJOIN_NVIM_WAIT_MS") or "60000")
local buf = vim.api.nvim_get_current_buf()
local version = vim.version()
local result = {
  nvim = string.format("%d.%d.%d", version.major, version.minor, version.patch),
  filetype = vim.bo[buf].filetype,
  diagnostics = {},
}
vim.wait(wait_ms, function()
  return #vim.diagnostic.get(buf) > 0
end, 20)
local clients = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = buf }) -- Neovim 0.10+
  or vim.lsp.buf_get_clients(buf)
result.clients = #vim.tbl_keys(clients)
for _, d in ipairs(vim.diagnostic.get(buf)) do
  local lsp = d.user_data and d.user_data.lsp or {}
  table.insert(result.diagnostics, {
    code = d.code or lsp.code,
    line = d.lnum + 1,
    col = d.col + 1,
    end_line = d.end_lnum + 1,
    end_col = d.end_col + 1,
    severity = vim.diagnostic.severity[d.severity],
    message = d.message,
  })
end
local params = {
  textDocument = { uri = vim.uri_from_bufnr(buf) },
  position = { line = tonumber(hover_at[1]) - 1, character = tonumber(hover_at[2]) - 1 },
}
for _, reply in pairs(vim.lsp.buf_request_sync(buf, "textDocument/hover", params, wait_ms) or {}) do
  if reply.result then
    result.hover = reply.result.contents
  end
  if reply.err then
    result.hover_error = reply.err
  end
end
local file = assert(io.open(out, "w"))
file:write(vim.fn.json_encode(result))
file:close()
vim.cmd("qall!")
