import java.util.regex.*;
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;

/** Java's own matcher for tests/compiler/vocabulary/test_javaregex.py: lines of hex(pattern) TAB hex(text) in,
 * each match's groups (hex, or - for a group that took no part) out, as Matcher.find finds them. */
public class RegexProbe {
    static String unhex(String h) {
        byte[] b = new byte[h.length() / 2];
        for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        return new String(b, StandardCharsets.UTF_8);
    }
    static String hex(String s) {
        StringBuilder sb = new StringBuilder();
        for (byte x : s.getBytes(StandardCharsets.UTF_8)) sb.append(String.format("%02x", x));
        return sb.toString();
    }
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
        String line;
        Map<String, Pattern> cache = new HashMap<>();
        while ((line = in.readLine()) != null) {
            String[] parts = line.split("\t", -1);
            String p = unhex(parts[0]);
            String s = unhex(parts[1]);
            Pattern pat;
            try {
                pat = cache.get(p);
                if (pat == null) { pat = Pattern.compile(p); cache.put(p, pat); }
            } catch (PatternSyntaxException e) {
                out.println("ERR");
                continue;
            }
            Matcher m = pat.matcher(s);
            StringBuilder sb = new StringBuilder();
            int n = 0;
            while (m.find() && n < 50) {
                n++;
                sb.append("M");
                for (int g = 0; g <= m.groupCount(); g++) {
                    String v = m.group(g);
                    sb.append(v == null ? ",-" : "," + hex(v));
                }
                sb.append(";");
            }
            out.println(sb.toString());
        }
    }
}
